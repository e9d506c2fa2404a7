#pragma once
// The TIDs a process in a PID namespace of its own (a container) knows its threads by, mapped to
// the host's. What the process records of a thread (CPython's native_thread_id, glibc's struct
// pthread) is its namespace's TID; what /proc, ptrace and the unwinder take is the host's. This
// map is the one place where the first becomes the second; a process in dapprof's own namespace
// maps every TID to itself at no cost.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <unordered_map>

namespace dapprof::sampler::process {

class NamespaceTids {
 public:
  using Clock = std::chrono::steady_clock;
  // A map older than this is made again before it answers: a TID of the namespace freed and given
  // to a new thread must not keep the old thread's host TID.
  static constexpr auto kMaxAge = std::chrono::seconds(1);
  // How soon after a listing a TID still unknown may have it made again: a thread that has exited
  // stays in Python's thread list for a while and must not cost a listing at every sample.
  static constexpr auto kRetryAfter = std::chrono::milliseconds(10);

  // Decides once (a process never changes its PID namespace) whether `pid` is in another PID
  // namespace than /proc's.
  explicit NamespaceTids(pid_t pid);

  bool nested() const { return nested_; }
  // The host TID of the thread the process knows as `inner`; 0 if it has no such thread.
  pid_t host(pid_t inner);
  // The TID the process knows its thread `host` by; 0 if it has no such thread.
  pid_t inner(pid_t host);

 private:
  // Lists the threads again (each one's NSpid) if the map is old, or if `missing` and the last
  // listing is not too recent.
  void refresh(bool missing);
  pid_t pid_;
  bool nested_ = false;
  std::unordered_map<pid_t, pid_t> to_host_, to_inner_;
  std::optional<Clock::time_point> listed_;
};

}  // namespace dapprof::sampler::process
