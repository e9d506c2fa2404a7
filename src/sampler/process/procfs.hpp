#pragma once
// Reading /proc files. Plain open/read: iostreams throw when a read fails because the process or
// thread exited meanwhile (ESRCH), which is routine here, not exceptional.
#include <optional>
#include <string>

namespace dapprof::sampler::process {

// The whole file, or nullopt with errno-style *error set (ENOENT, ESRCH, EACCES...).
std::optional<std::string> read_proc_file(const std::string& path, int* error = nullptr);

}  // namespace dapprof::sampler::process
