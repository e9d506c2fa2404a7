#pragma once
// Opening the files a target maps. /proc/PID/maps names them as the reader's root sees them when
// it can (a chroot shows host paths), otherwise as the target sees them (a container with its own
// mount namespace shows paths the host may not have, or has as other files): those are reached
// through /proc/PID/root, as py-spy does. The inode in the map entry tells which one is right.
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace dapprof::sampler::process {

// The path on which this process can open the file `pid` maps at `path`: /proc/PID/root<path> or
// `path`, whichever is the mapped file (same inode; 0 accepts any), else whichever exists, in that
// order; else `path` (for an error message that names it).
std::string target_file_path(pid_t pid, const std::string& path, std::uint64_t inode);

}  // namespace dapprof::sampler::process
