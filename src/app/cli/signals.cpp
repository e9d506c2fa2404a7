#include "app/cli/signals.hpp"

#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace dapprof::app::cli {

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, &previous_);
}

StopSignals::~StopSignals() {
  // Consume what arrived meanwhile: it has been handled as a stop request already.
  const timespec zero{0, 0};
  while (sigtimedwait(&set_, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

std::optional<int> StopSignals::wait(std::chrono::milliseconds timeout) const {
  if (timeout.count() < 0) timeout = std::chrono::milliseconds(0);
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec ts{static_cast<time_t>(secs.count()),
                    static_cast<long>((timeout - secs).count()) * 1000000L};
  const int sig = sigtimedwait(&set_, nullptr, &ts);
  if (sig > 0) return sig;
  return std::nullopt;  // EAGAIN (timeout) or EINTR
}

}  // namespace dapprof::app::cli
