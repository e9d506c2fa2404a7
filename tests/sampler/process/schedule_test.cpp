// The drift-free schedule, with synthetic time (no clock involved).
#include "sampler/loop/schedule.hpp"

#include <gtest/gtest.h>

namespace dapprof::sampler::loop {
namespace {

using namespace std::chrono_literals;

TEST(Schedule, TicksAreMultiplesOfThePeriodFromTheStart) {
  const Schedule::Clock::time_point t0{1s};
  Schedule s(t0, 100);  // 10 ms
  EXPECT_EQ(s.next(), t0);
  // Each tick took a while, but less than a period: no drift, nothing skipped.
  EXPECT_EQ(s.advance(t0 + 3ms), 0u);
  EXPECT_EQ(s.next(), t0 + 10ms);
  EXPECT_EQ(s.advance(t0 + 19ms), 0u);
  EXPECT_EQ(s.next(), t0 + 20ms);
}

TEST(Schedule, LateTicksAreSkippedNotBurst) {
  const Schedule::Clock::time_point t0{1s};
  Schedule s(t0, 100);
  // Tick 0 ran until 35 ms: ticks 1 and 2 were missed; tick 3 (30 ms) runs at once.
  EXPECT_EQ(s.advance(t0 + 35ms), 2u);
  EXPECT_EQ(s.next(), t0 + 30ms);
  // Then back on the original grid.
  EXPECT_EQ(s.advance(t0 + 36ms), 0u);
  EXPECT_EQ(s.next(), t0 + 40ms);
  // Exactly on a tick's time is not late.
  EXPECT_EQ(s.advance(t0 + 50ms), 0u);
  EXPECT_EQ(s.next(), t0 + 50ms);
}

TEST(Schedule, HighRatesHaveAFloor) {
  const Schedule::Clock::time_point t0{1s};
  Schedule s(t0, 1e12);
  EXPECT_EQ(s.advance(t0), 0u);
  EXPECT_EQ(s.next(), t0 + 1us);
}

}  // namespace
}  // namespace dapprof::sampler::loop
