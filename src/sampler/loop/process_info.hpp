#pragma once
// What a sample says of its process, read once when sampling of the process starts.
#include <sys/types.h>

#include <memory>

#include "model/process_info.hpp"

namespace dapprof::sampler::loop {

std::shared_ptr<const model::ProcessInfo> read_process_info(pid_t pid);

}  // namespace dapprof::sampler::loop
