#include "adapter/profile_only/process_watch.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/process/tasks.hpp"

namespace dapprof::adapter::profile_only {
namespace {
constexpr auto kPollPeriod = std::chrono::milliseconds(250);
}

std::shared_ptr<ProcessWatch> ProcessWatch::start(Executor strand, pid_t pid,
                                                  std::function<void()> on_exit) {
  auto watch = std::make_shared<ProcessWatch>(strand, pid, std::move(on_exit));
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd >= 0) {
    watch->pidfd_.emplace(strand, fd);
    watch->wait_pidfd();
  } else {
    watch->poll();
  }
  return watch;
}

ProcessWatch::ProcessWatch(Executor strand, pid_t pid, std::function<void()> on_exit)
    : pid_(pid), on_exit_(std::move(on_exit)), timer_(strand) {}

void ProcessWatch::cancel() {
  on_exit_ = nullptr;
  timer_.cancel();
  asio::error_code ignored;
  if (pidfd_) pidfd_->close(ignored);
}

void ProcessWatch::wait_pidfd() {
  pidfd_->async_wait(asio::posix::stream_descriptor::wait_read,
                     [self = shared_from_this()](const asio::error_code& ec) {
                       if (!ec) self->fire();
                     });
}

void ProcessWatch::poll() {
  if (sampler::process::thread_gone(pid_, pid_)) return fire();
  timer_.expires_after(kPollPeriod);
  timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
    if (!ec && self->on_exit_) self->poll();
  });
}

void ProcessWatch::fire() {
  if (auto on_exit = std::exchange(on_exit_, nullptr)) on_exit();
}

}  // namespace dapprof::adapter::profile_only
