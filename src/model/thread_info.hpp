#pragma once
// Which thread a stack belongs to, as the sampler reads it, the protocol announces it and the
// writers label it.
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace dapprof::model {

struct ThreadInfo {
  pid_t pid = 0;                   // the process it runs in
  std::uint64_t thread_id = 0;     // Python's thread id (threading.get_ident()); 0: unknown
  std::uint64_t os_thread_id = 0;  // Linux TID
  std::string name;                // as the threading module knows it; empty if unknown
  bool operator==(const ThreadInfo&) const = default;
};

}  // namespace dapprof::model
