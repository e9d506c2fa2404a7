#pragma once
// Where a module's unwind table index (.eh_frame_hdr) is in the target's memory, for libunwind's
// remote table search. libunwind's own ptrace helper (_UPT_find_proc_info) opens each module at
// the path /proc/PID/maps shows and finds no unwind information in some builds (seen: every
// module of a Debian unstable root, whose eh_frame_hdr our own reader parses fine), and cannot
// reach a container's files at all; here the file is opened where the target's file really is,
// and libunwind reads the table itself from the target's memory.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "sampler/native/module_map.hpp"

namespace dapprof::sampler::native {

struct UnwindTable {
  std::uint64_t header = 0;    // runtime address of .eh_frame_hdr (libunwind's segbase)
  std::uint64_t table = 0;     // runtime address of its sorted (location, FDE) pairs
  std::uint64_t entries = 0;   // number of pairs
  std::uint64_t start_ip = 0;  // the module's code, as mapped
  std::uint64_t end_ip = 0;
};

class UnwindTables {
 public:
  explicit UnwindTables(pid_t pid) : pid_(pid) {}
  // The table of the module `mapping` belongs to; nullopt if it has none we can use.
  std::optional<UnwindTable> find(const Mapping& mapping);
  void clear() { tables_.clear(); }

 private:
  pid_t pid_;
  std::unordered_map<std::string, std::optional<UnwindTable>> tables_;  // by mapping start+path
};

}  // namespace dapprof::sampler::native
