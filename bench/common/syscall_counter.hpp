#pragma once
// The system calls one thread enters, as the kernel counts them: a perf counter on the
// raw_syscalls:sys_enter tracepoint. Every call counts, whatever it is and whoever makes it on the
// thread's behalf (libc, a library), which a count kept by the code itself could miss. It needs
// tracefs (for the tracepoint's id) and the right to watch the thread; without them it says so.
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

namespace dapprof::bench {

class SyscallCounter {
 public:
  // Counts the calls of thread `tid` from now on; 0: the calling thread.
  explicit SyscallCounter(pid_t tid = 0) {
    const auto id = tracepoint_id();
    if (!id) {
      error_ = "no tracefs (mount -t tracefs nodev /sys/kernel/tracing to count system calls)";
      return;
    }
    perf_event_attr attr{};
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.size = sizeof attr;
    attr.config = *id;
    fd_ =
        static_cast<int>(::syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd_ < 0) error_ = "perf_event_open was refused (see /proc/sys/kernel/perf_event_paranoid)";
  }
  ~SyscallCounter() {
    if (fd_ >= 0) ::close(fd_);
  }
  SyscallCounter(const SyscallCounter&) = delete;
  SyscallCounter& operator=(const SyscallCounter&) = delete;

  // The calls counted so far; nullopt if the counter could not be opened (see error()).
  std::optional<std::uint64_t> count() const {
    std::uint64_t n = 0;
    if (fd_ < 0 || ::read(fd_, &n, sizeof n) != static_cast<ssize_t>(sizeof n)) return std::nullopt;
    return n;
  }
  const std::string& error() const { return error_; }

 private:
  static std::optional<std::uint64_t> tracepoint_id() {
    for (const char* root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
      std::ifstream in(std::string(root) + "/events/raw_syscalls/sys_enter/id");
      std::uint64_t id = 0;
      if (in >> id) return id;
    }
    return std::nullopt;
  }

  int fd_ = -1;
  std::string error_;
};

}  // namespace dapprof::bench
