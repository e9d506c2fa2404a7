#pragma once
// /proc/PID/maps, parsed.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace dapprof::sampler::process {

struct MapEntry {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint64_t offset = 0;  // file offset of `start`
  std::string perms;         // "r-xp"
  std::string path;          // empty for anonymous mappings; see target_files.hpp to open it
  std::uint64_t inode = 0;   // of the mapped file; 0 for anonymous mappings
};

// NoSuchProcess if the process does not exist, ProcessExited once it has exited (a zombie), Generic
// for one with no map at all (a kernel thread). A process that exec'd meanwhile is read again.
Result<std::vector<MapEntry>> read_maps(pid_t pid);

}  // namespace dapprof::sampler::process
