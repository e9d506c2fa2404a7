#pragma once
// A drift-free tick schedule: tick n is due at start + n * period, whatever each tick cost.
#include <chrono>
#include <cstdint>

namespace dapprof::sampler::loop {

class Schedule {
 public:
  using Clock = std::chrono::steady_clock;

  Schedule(Clock::time_point start, double rate_hz);

  Clock::time_point next() const { return start_ + period_ * tick_; }
  // Moves to the next tick. When behind, only the latest due tick is kept (to run at once) and
  // the older ones are skipped rather than run in a burst; returns how many were skipped.
  std::uint64_t advance(Clock::time_point now);

 private:
  Clock::time_point start_;
  Clock::duration period_;
  std::uint64_t tick_ = 0;
};

}  // namespace dapprof::sampler::loop
