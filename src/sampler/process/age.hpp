#pragma once
// How long a process has existed, from the kernel's record of its start.
#include <sys/types.h>

#include <chrono>
#include <optional>

namespace dapprof::sampler::process {

// The time since `pid` started (its exec's fork), or nullopt if it cannot be read (gone).
std::optional<std::chrono::milliseconds> process_age(pid_t pid);

}  // namespace dapprof::sampler::process
