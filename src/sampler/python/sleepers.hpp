#pragma once
// Which threads of a process sleep, without asking the kernel at every sample. A thread the
// kernel showed sleeping is taken to sleep on until a sign that it woke: it holds the GIL, its
// top frame changed, or kRecheck has passed. So a program with many sleeping threads (a
// debugger's) samples nearly as cheaply as one with a single thread: the kernel is asked about a
// sleeper once per kRecheck, and the sampler may leave the rest of what it would cost unread (its
// top frame on 3.11-3.12, its TID on 3.8-3.10, both in that thread's own stack mapping).
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sampler/process/thread_states.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

class Sleepers {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kRecheck = std::chrono::milliseconds(50);

  explicit Sleepers(pid_t pid) : kernel_(pid) {}

  // Starts a sample taken at `now`: every question until the next begin() is of that instant.
  void begin(Clock::time_point now) { now_ = now; }
  Clock::time_point now() const { return now_; }

  // Whether thread `tid` is still taken to be asleep: the kernel showed it sleeping less than
  // kRecheck ago, it does not hold the GIL (its thread state is not `gil_holder`), and its top
  // frame, when given, is the one it had then.
  bool asleep(pid_t tid, Address tstate, Address gil_holder,
              std::optional<Address> top_frame = std::nullopt) const;

  struct Thread {
    pid_t tid = 0;
    Address tstate = 0;
    Address gil_holder = 0;
    std::optional<Address> top_frame;  // none: left unread because asleep() said so
  };
  // Each thread's state (true: running or runnable), asking the kernel about those neither
  // asleep nor holding the GIL (taken to be active).
  // Threads not listed are forgotten.
  std::unordered_map<pid_t, bool> states(const std::vector<Thread>& threads);
  // Every thread of `tids` asked of the kernel now (before pausing them: a paused thread would
  // show as stopped).
  std::unordered_map<pid_t, bool> ask_all(const std::vector<pid_t>& tids) {
    return kernel_.active(tids);
  }

  // 3.8-3.10: the TID found for a pthread id at the last sample, if any.
  std::optional<std::uint64_t> tid_of(std::uint64_t thread_id) const;
  // The TIDs found at this sample, by pthread id (those of other threads are forgotten).
  void found_tids(std::unordered_map<std::uint64_t, std::uint64_t> tids) {
    tids_ = std::move(tids);
  }

 private:
  struct Memo {
    bool idle = false;
    Address top_frame = 0;
    Clock::time_point checked;
  };
  process::ThreadStates kernel_;
  std::unordered_map<pid_t, Memo> memo_;                   // by TID
  std::unordered_map<std::uint64_t, std::uint64_t> tids_;  // TID by pthread id
  Clock::time_point now_;
};

}  // namespace dapprof::sampler::python
