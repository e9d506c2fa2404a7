#pragma once
// SIGINT/SIGTERM as events to wait for, not handlers: blocked for the whole process (threads
// started afterwards inherit the mask) and collected with sigtimedwait.
#include <chrono>
#include <csignal>
#include <optional>

namespace dapprof::app::cli {

class StopSignals {
 public:
  StopSignals();   // blocks SIGINT and SIGTERM in the calling thread
  ~StopSignals();  // restores the previous mask (a pending signal then acts as usual)
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Waits up to `timeout` for one of them; returns its number.
  std::optional<int> wait(std::chrono::milliseconds timeout) const;

 private:
  sigset_t set_;
  sigset_t previous_;
};

}  // namespace dapprof::app::cli
