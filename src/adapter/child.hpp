#pragma once
// Child processes (the spawned debug adapter, a profile-only session's program): argv exec with
// pipes, never a shell. The Reaper collects exits on SIGCHLD inside the io_context, so the I/O
// thread never blocks in waitpid. A released child that does not exit by itself is escalated:
// SIGTERM, then SIGKILL.
#include <sys/types.h>

#include <asio.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace dapprof::adapter {

class Reaper {
 public:
  using OnExit = std::function<void(int status)>;
  explicit Reaper(asio::io_context& io);
  ~Reaper();
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

  // on_exit runs on the io_context (not on a strand) once the child is reaped.
  void watch(pid_t pid, OnExit on_exit);
  // Nobody waits for this child any more: give it `grace` to exit (its stdin is closed), then
  // SIGTERM, then SIGKILL after another `grace`; it is reaped whatever happens.
  void release(pid_t pid, std::chrono::milliseconds grace);
  // Escalates every live child now (daemon shutdown): SIGTERM, SIGKILL after `grace`.
  void terminate_all(std::chrono::milliseconds grace);
  std::size_t live() const;
  // Last resort once the io_context has stopped: SIGKILL and blocking reap of whatever is left.
  void kill_and_reap_all();

 private:
  struct Child {
    OnExit on_exit;
    std::shared_ptr<asio::steady_timer> timer;
  };
  void arm();
  void reap();
  void escalate(pid_t pid, int signal, std::chrono::milliseconds grace);

  asio::io_context& io_;
  asio::signal_set signals_;
  mutable std::mutex mutex_;
  std::map<pid_t, Child> children_;
  bool stopped_ = false;
};

// A running child. Destruction releases it to the reaper (no zombie, no orphaned adapter).
class ChildProcess {
 public:
  struct Pipes {
    int to_child = -1;     // its stdin
    int from_child = -1;   // its stdout
    int errors_from = -1;  // its stderr, with Setup::capture_stderr (else it shares ours)
  };
  struct Setup {
    std::string cwd;                         // empty: ours
    bool capture_stderr = false;             // a pipe of its own (a profiled program's output)
    std::string what = "the debug adapter";  // for error messages
    std::string hint = "(set --python or check PATH)";
  };
  // argv[0] is looked up on PATH; extra_env entries (KEY=VALUE) are added to our environment.
  static Result<std::unique_ptr<ChildProcess>> spawn(Reaper& reaper,
                                                     const std::vector<std::string>& argv,
                                                     const std::vector<std::string>& extra_env,
                                                     Pipes& pipes, Reaper::OnExit on_exit,
                                                     const Setup& setup);
  static Result<std::unique_ptr<ChildProcess>> spawn(Reaper& reaper,
                                                     const std::vector<std::string>& argv,
                                                     const std::vector<std::string>& extra_env,
                                                     Pipes& pipes, Reaper::OnExit on_exit) {
    return spawn(reaper, argv, extra_env, pipes, std::move(on_exit), Setup{});
  }
  ChildProcess(Reaper& reaper, pid_t pid) : reaper_(reaper), pid_(pid) {}
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  pid_t pid() const { return pid_; }

 private:
  Reaper& reaper_;
  pid_t pid_;
};

}  // namespace dapprof::adapter
