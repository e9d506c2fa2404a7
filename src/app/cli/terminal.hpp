#pragma once
// The terminal `dapprof top` draws on, as plain ANSI (VT100/xterm) escape sequences over termios
// rather than ncurses: the screen is redrawn whole once a second, which needs only cursor
// positioning, line erase, the alternate screen and cursor hiding, understood alike by every
// terminal emulator top is run in (xterm and its kin, tmux, screen, VS Code's terminal); this
// avoids a terminfo database lookup, which the statically linked release binary could not be
// sure to find on the target system, and a new dependency.
#include <chrono>
#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace dapprof::app::cli {

// What the user pressed, decoded; other keys (and escape sequences such as arrows) are dropped.
enum class Key {
  SortOwnShare,
  SortTotalShare,
  SortOwnTime,
  SortTotalTime,
  ToggleLines,
  Pause,
  Quit
};

struct TerminalInput {
  std::vector<Key> keys;
  bool resized = false;
  bool closed = false;  // stdin reached end of file (the terminal went away)
};

struct TerminalSize {
  int rows = 24;
  int columns = 80;
};

class Terminal {
 public:
  // Needs stdin and stdout to be terminals. Blocks SIGWINCH in the calling thread (to collect it
  // from a descriptor): open it before starting threads, so that they inherit the mask.
  static Result<std::unique_ptr<Terminal>> open();
  // Restores the terminal's mode, the main screen and the cursor, and the signal mask.
  ~Terminal();
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  TerminalSize size() const;
  // Waits up to `timeout` for keys or a resize.
  TerminalInput wait(std::chrono::milliseconds timeout);
  // Replaces the screen's contents with `lines`, each cut to the width, as many as fit.
  void draw(const std::vector<std::string>& lines);

 private:
  Terminal() = default;
  int resize_fd_ = -1;  // signalfd of SIGWINCH
  sigset_t previous_mask_{};
};

// `text` cut to `columns` code points (one terminal column each, for the names top shows), with
// a trailing '…' when cut.
std::string fit_columns(std::string_view text, std::size_t columns);

}  // namespace dapprof::app::cli
