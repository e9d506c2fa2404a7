#pragma once
// The target's executable mappings (from /proc/PID/maps), looked up by address. Shared by the
// unwinder (which module's unwind tables cover an IP) and the symbolizer (which file and symbol).
// Re-read when an address falls outside every known mapping: a module loaded since (an extension
// imported after attach). Callers that cache by address watch generation() to flush.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/result.hpp"
#include "sampler/process/maps.hpp"

namespace dapprof::sampler::native {

struct Mapping {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint64_t offset = 0;  // file offset of `start`
  std::string path;          // as /proc shows it; "" for anonymous memory
  std::uint64_t inode = 0;   // of the file, to find it in a container (process/target_files.hpp)
};

class ModuleMap {
 public:
  explicit ModuleMap(pid_t pid) : pid_(pid) {}

  // Reads the maps now. NoSuchProcess / ProcessExited / PermissionDenied as read_maps.
  Status load();
  // The executable mapping holding `address`, or nullptr. An address outside every mapping makes
  // the maps be read again (at most every kRefreshInterval, and once per unknown address).
  const Mapping* find(std::uint64_t address);
  // Changes whenever the set of mappings changed; starts at 1 after the first load().
  std::uint64_t generation() const { return generation_; }
  // Whether `address` lies in a read-only mapping of a file (code, unwind tables): memory whose
  // contents do not change while the mapping stays.
  bool read_only_file(std::uint64_t address) const;
  pid_t pid() const { return pid_; }
  // Every mapping of the last read, executable or not, as /proc lists them.
  const std::vector<process::MapEntry>& entries() const { return entries_; }

  // Exposed for tests: the executable mappings of a parsed maps listing, sorted by address.
  static std::vector<Mapping> executable(const std::vector<process::MapEntry>& entries);

 private:
  const Mapping* lookup(std::uint64_t address) const;

  pid_t pid_;
  std::vector<process::MapEntry> entries_;
  std::vector<Mapping> exec_;
  std::uint64_t generation_ = 0;
  std::chrono::steady_clock::time_point last_refresh_{};
  std::unordered_set<std::uint64_t> unknown_;  // looked for since the last change, not found
};

}  // namespace dapprof::sampler::native
