#pragma once
// Reading /proc files. Plain open/read: iostreams throw when a read fails because the process or
// thread exited meanwhile (ESRCH), which is routine here, not exceptional.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace dapprof::sampler::process {

// The whole file, or nullopt with errno-style *error set (ENOENT, ESRCH, EACCES...).
std::optional<std::string> read_proc_file(const std::string& path, int* error = nullptr);
// The names in a directory ("." and ".." left out), or nullopt with *error set.
std::optional<std::vector<std::string>> list_directory(const std::string& path,
                                                       int* error = nullptr);
// The PIDs of /proc's processes, at the time of listing.
std::vector<pid_t> proc_pids();

}  // namespace dapprof::sampler::process
