#pragma once
// The program a profile-only session launches: spawned without a shell, its stdout and stderr
// read as text for `output` events, its exit reported once its output has been read to the end.
// Everything runs on the session's strand.
#include <sys/types.h>

#include <array>
#include <asio.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapter/child.hpp"
#include "common/result.hpp"

namespace dapprof::adapter::profile_only {

struct LaunchSpec {
  std::vector<std::string> argv;  // PYTHON SCRIPT ARGS... or PYTHON -m MODULE ARGS...
  std::vector<std::string> env;   // KEY=VALUE added to the daemon's environment
  std::string cwd;                // empty: the daemon's
};

class LaunchedProgram : public std::enable_shared_from_this<LaunchedProgram> {
 public:
  using Executor = asio::strand<asio::io_context::executor_type>;
  struct Events {
    std::function<void(std::string_view category, std::string text)> output;
    // Its exit code (128 + N for signal N), once stdout and stderr are read to the end.
    std::function<void(int exit_code)> exited;
  };

  static Result<std::shared_ptr<LaunchedProgram>> start(Executor strand, Reaper& reaper,
                                                        const LaunchSpec& spec, Events events);
  LaunchedProgram(Executor strand, Events events);
  ~LaunchedProgram();

  pid_t pid() const { return pid_; }
  bool running() const { return child_ != nullptr && !exit_code_; }
  // SIGTERM now; the reaper escalates to SIGKILL if it does not exit.
  void terminate();
  // Flow control: while paused its output is not read (the program blocks on a full pipe
  // rather than the daemon buffering without bound).
  void pause_output();
  void resume_output();
  // No more events; the program is released to the reaper (terminated unless it exits).
  void close();

 private:
  struct Stream {
    std::optional<asio::posix::stream_descriptor> pipe;
    std::string category;
    std::string pending;  // an incomplete UTF-8 sequence at the end of the last read
    std::array<char, 16384> buffer{};
    bool reading = false;
    bool open = false;
  };
  void read(Stream& stream);
  void end(Stream& stream);  // closes its pipe: nothing more is read from it
  void on_read(Stream& stream, const asio::error_code& ec, std::size_t n);
  void on_exit(int status);
  void maybe_report_exit();

  Executor strand_;
  Events events_;
  std::unique_ptr<ChildProcess> child_;
  pid_t pid_ = 0;
  Stream out_, err_;
  std::optional<int> exit_code_;
  asio::steady_timer drain_timer_;  // a grandchild may keep the pipes open after the exit
  bool paused_ = false;
  bool reported_ = false;
  bool closed_ = false;
};

}  // namespace dapprof::adapter::profile_only
