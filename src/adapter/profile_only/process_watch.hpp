#pragma once
// Tells when a process that is not our child exits (an attached profile-only session's
// target): a pidfd becomes readable then; kernels without pidfd_open are polled instead.
#include <sys/types.h>

#include <asio.hpp>
#include <functional>
#include <memory>
#include <optional>

namespace dapprof::adapter::profile_only {

class ProcessWatch : public std::enable_shared_from_this<ProcessWatch> {
 public:
  using Executor = asio::strand<asio::io_context::executor_type>;
  // on_exit runs on the strand, once, unless cancel() came first.
  static std::shared_ptr<ProcessWatch> start(Executor strand, pid_t pid,
                                             std::function<void()> on_exit);
  ProcessWatch(Executor strand, pid_t pid, std::function<void()> on_exit);
  void cancel();

 private:
  void wait_pidfd();
  void poll();
  void fire();

  pid_t pid_;
  std::function<void()> on_exit_;
  std::optional<asio::posix::stream_descriptor> pidfd_;
  asio::steady_timer timer_;
};

}  // namespace dapprof::adapter::profile_only
