#pragma once
// What the sampler produces. Shared by the sampling core, the record/dump command line and the
// daemon, so it depends on nothing but the standard library.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dapprof::sampler {

struct Frame {
  std::string function;  // qualified name where the Python version has one
  std::string file;
  int line = 0;  // 0 when unknown
  bool native = false;
  std::string module;  // shared object, for native frames
  bool operator==(const Frame&) const = default;
};

struct ThreadStack {
  std::uint64_t thread_id = 0;     // Python's thread id (threading.get_ident())
  std::uint64_t os_thread_id = 0;  // Linux TID
  std::string name;                // as the threading module knows it; empty if unknown
  bool owns_gil = false;
  bool active = false;        // running, not waiting in a syscall or on a lock
  std::vector<Frame> frames;  // innermost first

  std::string_view status() const { return !active ? "idle" : owns_gil ? "active+gil" : "active"; }
};

// Every (selected) thread of one process, read at one instant.
struct Snapshot {
  pid_t pid = 0;
  std::chrono::steady_clock::time_point time;
  std::vector<ThreadStack> threads;
};

}  // namespace dapprof::sampler
