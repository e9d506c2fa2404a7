#pragma once
// The sampling loop's stop request, and its wait for the next tick. A condition variable's timed
// wait cost each tick a second system call: glibc takes the mutex back after the timeout in its
// contended state, so the unlock that follows always wakes through the kernel. Here the wait is
// one futex call on the flag's own word, which stop's raise() wakes.
#include <atomic>
#include <chrono>
#include <cstdint>

namespace dapprof::sampler::loop {

class StopFlag {
 public:
  using Clock = std::chrono::steady_clock;

  // Sets the flag and wakes a waiter; any thread, any number of times.
  void raise();
  bool raised() const { return word_.load(std::memory_order_acquire) != 0; }
  // Sleeps until `when` (steady clock) or the flag is raised; true if it was.
  bool wait_until(Clock::time_point when) const;

 private:
  // The futex word: 32 bits, as the kernel compares it.
  mutable std::atomic<std::uint32_t> word_{0};
};

}  // namespace dapprof::sampler::loop
