#include "sampler/loop/stop_flag.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace dapprof::sampler::loop {
namespace {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "a futex word is a plain 32-bit integer");
// steady_clock is CLOCK_MONOTONIC, the clock of FUTEX_WAIT_BITSET's absolute timeout.
static_assert(StopFlag::Clock::is_steady);

long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value, const timespec* at,
           std::uint32_t bits) {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op | FUTEX_PRIVATE_FLAG,
                   value, at, nullptr, bits);
}

}  // namespace

void StopFlag::raise() {
  word_.store(1, std::memory_order_release);
  futex(word_, FUTEX_WAKE, INT_MAX, nullptr, 0);
}

bool StopFlag::wait_until(Clock::time_point when) const {
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
  const timespec at{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  // The kernel sleeps only while the word is still 0, so a raise() between the load and the
  // call is not missed. EINTR (a signal, e.g. a debugger's stop) just waits again.
  while (!raised()) {
    // Woken (by raise(), or spuriously), a signal, or the word no longer 0: look again.
    if (futex(word_, FUTEX_WAIT_BITSET, 0, &at, FUTEX_BITSET_MATCH_ANY) == 0 || errno == EINTR ||
        errno == EAGAIN)
      continue;
    return raised();  // the deadline (ETIMEDOUT), or no wait possible: let the loop run
  }
  return true;
}

}  // namespace dapprof::sampler::loop
