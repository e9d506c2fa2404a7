#include "adapter/profile_only/program.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dapprof::adapter::profile_only {
namespace {

// After the exit, how long output still held open by a grandchild may keep `exited` waiting.
constexpr auto kDrainGrace = std::chrono::milliseconds(500);

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Bytes at the end of `text` that start a UTF-8 sequence the read cut short: kept for the next
// read, so that a character split between two reads is not turned into two replacement marks.
std::size_t incomplete_tail(const std::string& text) {
  const std::size_t n = text.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const std::size_t length = (c & 0xE0) == 0xC0   ? 2
                               : (c & 0xF0) == 0xE0 ? 3
                               : (c & 0xF8) == 0xF0 ? 4
                                                    : 1;
    return length > back ? back : 0;
  }
  return 0;
}

}  // namespace

Result<std::shared_ptr<LaunchedProgram>> LaunchedProgram::start(Executor strand, Reaper& reaper,
                                                                const LaunchSpec& spec,
                                                                Events events) {
  auto program = std::make_shared<LaunchedProgram>(strand, std::move(events));
  std::weak_ptr<LaunchedProgram> weak = program;
  auto on_exit = [weak, strand](int status) {
    asio::post(strand, [weak, status] {
      if (auto p = weak.lock()) p->on_exit(status);
    });
  };
  ChildProcess::Pipes pipes;
  ChildProcess::Setup setup;
  setup.cwd = spec.cwd;
  setup.capture_stderr = true;
  setup.what = "the program";
  setup.hint = "(is \"python\" in the launch configuration an interpreter on PATH?)";
  auto child = ChildProcess::spawn(reaper, spec.argv, spec.env, pipes, std::move(on_exit), setup);
  if (!child) return child.error();
  // The program reads no input from the session: end of input at once.
  ::close(pipes.to_child);
  program->child_ = std::move(*child);
  program->pid_ = program->child_->pid();
  program->out_.pipe.emplace(strand, pipes.from_child);
  program->out_.category = "stdout";
  program->out_.open = true;
  program->err_.pipe.emplace(strand, pipes.errors_from);
  program->err_.category = "stderr";
  program->err_.open = true;
  program->read(program->out_);
  program->read(program->err_);
  return program;
}

LaunchedProgram::LaunchedProgram(Executor strand, Events events)
    : strand_(strand), events_(std::move(events)), drain_timer_(strand) {}

LaunchedProgram::~LaunchedProgram() { close(); }

void LaunchedProgram::terminate() {
  if (running()) ::kill(pid_, SIGTERM);
}

void LaunchedProgram::pause_output() { paused_ = true; }

void LaunchedProgram::resume_output() {
  if (!paused_) return;
  paused_ = false;
  read(out_);
  read(err_);
}

void LaunchedProgram::close() {
  if (closed_) return;
  closed_ = true;
  events_ = {};
  drain_timer_.cancel();
  end(out_);
  end(err_);
  child_.reset();  // released to the reaper: SIGTERM after its grace, then SIGKILL
}

void LaunchedProgram::end(Stream& stream) {
  asio::error_code ignored;
  if (stream.pipe) stream.pipe->close(ignored);
  stream.open = false;
}

void LaunchedProgram::read(Stream& stream) {
  if (closed_ || paused_ || stream.reading || !stream.open) return;
  stream.reading = true;
  stream.pipe->async_read_some(
      asio::buffer(stream.buffer),
      [self = shared_from_this(), &stream](const asio::error_code& ec, std::size_t n) {
        self->on_read(stream, ec, n);
      });
}

void LaunchedProgram::on_read(Stream& stream, const asio::error_code& ec, std::size_t n) {
  stream.reading = false;
  if (closed_) return;
  if (n > 0) {
    std::string text = std::move(stream.pending);
    text.append(stream.buffer.data(), n);
    const std::size_t tail = incomplete_tail(text);
    stream.pending = text.substr(text.size() - tail);
    text.resize(text.size() - tail);
    if (!text.empty() && events_.output) events_.output(stream.category, std::move(text));
  }
  if (ec) {
    if (!stream.pending.empty() && events_.output)
      events_.output(stream.category, std::exchange(stream.pending, {}));
    end(stream);
    maybe_report_exit();
    return;
  }
  read(stream);
}

void LaunchedProgram::on_exit(int status) {
  if (closed_) return;
  exit_code_ = exit_code_of(status);
  spdlog::info("profiled program {} exited ({})", pid_, *exit_code_);
  drain_timer_.expires_after(kDrainGrace);
  drain_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
    if (ec || self->closed_) return;
    // A child of the program still holds its output: what it writes later is not shown.
    self->paused_ = true;
    self->end(self->out_);
    self->end(self->err_);
    self->maybe_report_exit();
  });
  // Output written just before the exit is still in the pipes: read it even if paused.
  paused_ = false;
  read(out_);
  read(err_);
  maybe_report_exit();
}

void LaunchedProgram::maybe_report_exit() {
  if (reported_ || !exit_code_ || out_.open || err_.open || out_.reading || err_.reading) return;
  reported_ = true;
  drain_timer_.cancel();
  if (events_.exited) events_.exited(*exit_code_);
}

}  // namespace dapprof::adapter::profile_only
