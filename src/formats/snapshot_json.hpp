#pragma once
// One snapshot of a process as the JSON document of `dapprof dump --json`:
// {"pid", "python_version", "threads": [{"thread_id", "os_thread_id", "name", "status",
// "owns_gil", "active", "frames": [{"function", "file", "line"}]}]}, frames innermost first.
#include <nlohmann/json.hpp>
#include <string>

#include "model/snapshot.hpp"

namespace dapprof::formats {

nlohmann::ordered_json snapshot_to_json(const model::Snapshot& snapshot,
                                        const std::string& python_version);

}  // namespace dapprof::formats
