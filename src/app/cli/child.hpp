#pragma once
// The program `dapprof record` or `top -- PROGRAM ARGS` starts: spawned without a shell, reaped
// exactly once, and never left behind if dapprof gives up early.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace dapprof::app::cli {

// Where the child's stdin, stdout and stderr go: dapprof's own, or /dev/null (when dapprof draws
// on the terminal, the program's output would tear the screen and its reads would take the keys),
// or its output to a file (record --capture) with stdin dapprof's.
enum class ChildIo { Inherit, Null, Capture };

class Child {
 public:
  // Searches PATH for argv[0] like a shell would, with default signal dispositions and an empty
  // signal mask (dapprof blocks SIGINT/SIGTERM for itself).
  // With ChildIo::Capture, `capture_fd` is where stdout and stderr go.
  static Result<Child> spawn(const std::vector<std::string>& argv, ChildIo io = ChildIo::Inherit,
                             int capture_fd = -1);
  Child(Child&& other) noexcept;
  Child& operator=(Child&&) = delete;
  Child(const Child&) = delete;
  ~Child();  // kills (SIGKILL) and reaps a child still running: callers wait() normally

  pid_t pid() const { return pid_; }
  // Non-blocking: true once the child has exited (and is reaped).
  bool poll();
  // Blocks until the child exits; returns its exit code, 128+signal if killed by a signal.
  int wait();
  void signal(int sig) const;
  std::optional<int> exit_code() const { return exit_code_; }

 private:
  explicit Child(pid_t pid) : pid_(pid) {}
  void record(int status);
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

}  // namespace dapprof::app::cli
