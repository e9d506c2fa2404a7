// The sampling loop's stop flag and its timed wait, with real threads and the real clock. The
// bounds are loose (a loaded machine may run a thread late), but each is one that a wait which
// ignored its deadline, or missed a raise, would break.
#include "sampler/loop/stop_flag.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <thread>

namespace dapprof::sampler::loop {
namespace {

using namespace std::chrono_literals;
using Clock = StopFlag::Clock;

TEST(StopFlag, AWaitEndsAtItsDeadline) {
  StopFlag flag;
  const auto start = Clock::now();
  EXPECT_FALSE(flag.wait_until(start + 30ms));
  const auto took = Clock::now() - start;
  EXPECT_GE(took, 30ms);
  EXPECT_LT(took, 2s);
  // A deadline already past does not sleep.
  EXPECT_FALSE(flag.wait_until(start));
}

TEST(StopFlag, ARaiseFromAnotherThreadEndsALongWait) {
  StopFlag flag;
  std::thread raiser([&] {
    std::this_thread::sleep_for(50ms);
    flag.raise();
  });
  const auto start = Clock::now();
  EXPECT_TRUE(flag.wait_until(start + 60s));
  EXPECT_LT(Clock::now() - start, 10s);
  raiser.join();
  EXPECT_TRUE(flag.raised());
}

TEST(StopFlag, ARaiseBeforeTheWaitIsNotMissed) {
  StopFlag flag;
  flag.raise();
  const auto start = Clock::now();
  EXPECT_TRUE(flag.wait_until(start + 60s));
  EXPECT_LT(Clock::now() - start, 1s);
}

void ignore(int) {}

TEST(StopFlag, ASignalDoesNotEndTheWaitEarly) {
  struct sigaction sa {};
  sa.sa_handler = ignore;  // a handler, so that the signal interrupts the futex call (EINTR)
  struct sigaction old {};
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  StopFlag flag;
  const pthread_t waiter = pthread_self();
  std::thread signaller([&] {
    std::this_thread::sleep_for(20ms);
    pthread_kill(waiter, SIGUSR1);
  });
  const auto start = Clock::now();
  EXPECT_FALSE(flag.wait_until(start + 150ms));
  EXPECT_GE(Clock::now() - start, 150ms);
  signaller.join();
  sigaction(SIGUSR1, &old, nullptr);
}

}  // namespace
}  // namespace dapprof::sampler::loop
