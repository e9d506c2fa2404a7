#include "app/cli/terminal.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace dapprof::app::cli {
namespace {

// Alternate screen (the shell's screen comes back intact), cursor hidden; and the reverse.
constexpr std::string_view kEnter = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J";
constexpr std::string_view kLeave = "\x1b[?25h\x1b[?1049l";

// The mode to restore, for the destructor and for a fatal signal that skips it (a crash must not
// leave the user's shell without echo).
termios saved_mode{};
volatile std::sig_atomic_t mode_saved = 0;
constexpr std::array kFatalSignals{SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGHUP, SIGQUIT};

void write_all(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(STDOUT_FILENO, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the terminal is gone: nothing left to draw on
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

void restore_screen() {
  if (!mode_saved) return;
  write_all(kLeave);
  tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_mode);
  mode_saved = 0;
}

// Only async-signal-safe calls (write, tcsetattr), then the signal's default action.
extern "C" void on_fatal_signal(int sig) {
  restore_screen();
  std::signal(sig, SIG_DFL);
  ::raise(sig);
}

std::optional<Key> key_of(char c) {
  switch (c) {
    case '1':
      return Key::SortOwnShare;
    case '2':
      return Key::SortTotalShare;
    case '3':
      return Key::SortOwnTime;
    case '4':
      return Key::SortTotalTime;
    case 'L':
    case 'l':
      return Key::ToggleLines;
    case ' ':
    case 'p':
    case 'P':
      return Key::Pause;
    case 'q':
    case 'Q':
    case '\x03':  // Ctrl-C: the terminal does not make it a signal in raw mode
      return Key::Quit;
    default:
      return std::nullopt;
  }
}

std::vector<Key> decode(std::string_view bytes) {
  std::vector<Key> keys;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '\x1b') {
      // An escape sequence (ESC [ ... final, ESC O x): its digits are not sort keys.
      if (i + 1 < bytes.size() && (bytes[i + 1] == '[' || bytes[i + 1] == 'O')) {
        i += 2;
        while (i < bytes.size() && !(bytes[i] >= 0x40 && bytes[i] <= 0x7e)) ++i;
      }
      continue;
    }
    if (auto k = key_of(bytes[i])) keys.push_back(*k);
  }
  return keys;
}

}  // namespace

Result<std::unique_ptr<Terminal>> Terminal::open() {
  if (isatty(STDIN_FILENO) != 1 || isatty(STDOUT_FILENO) != 1) {
    return Error{"top needs a terminal on stdin and stdout", ErrorCode::InvalidArgument};
  }
  termios mode{};
  if (tcgetattr(STDIN_FILENO, &mode) != 0) {
    return Error{fmt::format("cannot read the terminal's mode: {}", std::strerror(errno))};
  }
  std::unique_ptr<Terminal> t(new Terminal());
  sigset_t winch;
  sigemptyset(&winch);
  sigaddset(&winch, SIGWINCH);
  pthread_sigmask(SIG_BLOCK, &winch, &t->previous_mask_);
  t->resize_fd_ = signalfd(-1, &winch, SFD_NONBLOCK | SFD_CLOEXEC);
  if (t->resize_fd_ < 0) {
    return Error{fmt::format("cannot watch the terminal's size: {}", std::strerror(errno))};
  }
  saved_mode = mode;
  mode_saved = 1;
  for (int sig : kFatalSignals) {
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_RESETHAND;
    sigaction(sig, &sa, nullptr);
  }
  // Keys one by one, unechoed; Ctrl-C as a key, so that it does not reach a program top started
  // (it would be in the terminal's foreground process group too).
  termios raw = mode;
  raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | ISIG | IEXTEN);
  raw.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL);
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
  write_all(kEnter);
  return t;
}

Terminal::~Terminal() {
  restore_screen();
  for (int sig : kFatalSignals) std::signal(sig, SIG_DFL);
  if (resize_fd_ >= 0) ::close(resize_fd_);
  // A resize meanwhile is stale: it must not act on the shell's behalf once unblocked.
  const timespec zero{0, 0};
  sigset_t winch;
  sigemptyset(&winch);
  sigaddset(&winch, SIGWINCH);
  while (sigtimedwait(&winch, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

TerminalSize Terminal::size() const {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0) return {};
  return {ws.ws_row, ws.ws_col};
}

TerminalInput Terminal::wait(std::chrono::milliseconds timeout) {
  TerminalInput input;
  std::array<pollfd, 2> fds{{{STDIN_FILENO, POLLIN, 0}, {resize_fd_, POLLIN, 0}}};
  const int n =
      ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long>(timeout.count(), 0)));
  if (n <= 0) return input;
  if (fds[1].revents & POLLIN) {
    signalfd_siginfo info{};
    while (::read(resize_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      input.resized = true;
    }
  }
  if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
    std::array<char, 64> buf{};
    const ssize_t got = ::read(STDIN_FILENO, buf.data(), buf.size());
    if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
      input.closed = true;
    } else if (got > 0) {
      input.keys = decode({buf.data(), static_cast<std::size_t>(got)});
    }
  }
  return input;
}

void Terminal::draw(const std::vector<std::string>& lines) {
  const auto sz = size();
  std::string out;
  // Each row is positioned and erased before it is written, never ended by a newline: a row as
  // wide as the screen must neither scroll it nor have its last character erased.
  for (int row = 0; row < sz.rows; ++row) {
    out += fmt::format("\x1b[{};1H\x1b[2K", row + 1);
    if (static_cast<std::size_t>(row) < lines.size()) {
      out +=
          fit_columns(lines[static_cast<std::size_t>(row)], static_cast<std::size_t>(sz.columns));
    }
  }
  write_all(out);
}

std::string fit_columns(std::string_view text, std::size_t columns) {
  std::size_t points = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) ++points;
  }
  if (points <= columns) return std::string(text);
  if (columns == 0) return {};
  std::string out;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts = (static_cast<unsigned char>(text[i]) & 0xc0) != 0x80;
    if (starts && ++kept == columns) break;  // room for the ellipsis
    out += text[i];
  }
  return out + "…";
}

}  // namespace dapprof::app::cli
