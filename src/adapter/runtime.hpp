#pragma once
// What every daemon mode shares: the io_context (one I/O thread), the child reaper, the live
// sessions, and an orderly shutdown on SIGINT/SIGTERM (sessions ended, adapters reaped, exit 0).
#include <asio.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "adapter/child.hpp"
#include "adapter/options.hpp"
#include "adapter/session.hpp"
#include "adapter/trace.hpp"

namespace dapprof::adapter {

class Runtime {
 public:
  explicit Runtime(const Options& options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Opens the trace file; errors are for the user.
  Status init();
  asio::io_context& io() { return io_; }
  Reaper& reaper() { return reaper_; }

  // Starts a session on the client's fds, registered until it ends (then on_end runs).
  std::shared_ptr<Session> start_session(int client_read_fd, int client_write_fd,
                                         std::function<void()> on_end = {});
  // Registers and starts a session created elsewhere (a child process's session).
  void adopt_session(std::shared_ptr<Session> session, std::function<void()> on_end = {});
  // Called when the daemon starts stopping (e.g. to close the acceptor).
  void on_stopping(std::function<void()> callback) { on_stopping_ = std::move(callback); }
  // Ends every session, waits (bounded) for the adapters to exit, then stops the loop.
  void shutdown();
  // Runs the loop until shutdown; returns the exit code.
  int run();
  std::size_t sessions() const;

 private:
  void poll_shutdown();

  Options options_;
  asio::io_context io_{1};
  Reaper reaper_;
  asio::signal_set stop_signals_;
  asio::steady_timer shutdown_timer_;
  std::chrono::steady_clock::time_point shutdown_started_;
  bool stopping_ = false;
  bool terminated_children_ = false;
  std::shared_ptr<TraceWriter> trace_;
  UpstreamConnector connector_;
  std::function<void()> on_stopping_;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<Session>> sessions_;
};

}  // namespace dapprof::adapter
