#include "sampler/loop/schedule.hpp"

#include <algorithm>
#include <cmath>

namespace dapprof::sampler::loop {

Schedule::Schedule(Clock::time_point start, double rate_hz) : start_(start) {
  // A non-positive or absurd rate means "as fast as possible" with a 1 µs floor.
  const double seconds = rate_hz > 0 ? 1.0 / rate_hz : 0.0;
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::isfinite(seconds) ? seconds : 0.0));
  period_ = std::max<Clock::duration>(period, std::chrono::microseconds(1));
}

std::uint64_t Schedule::advance(Clock::time_point now) {
  ++tick_;
  if (now <= next()) return 0;
  // Run the latest tick that is due (less than a period late) at once; drop the older ones.
  const auto latest = static_cast<std::uint64_t>((now - start_) / period_);
  const std::uint64_t skipped = latest - tick_;
  tick_ = latest;
  return skipped;
}

}  // namespace dapprof::sampler::loop
