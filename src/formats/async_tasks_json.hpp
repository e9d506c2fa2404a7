#pragma once
// The asyncio tasks of a process as one JSON document, the one both `dapprof dump --async --json`
// prints and the daemon's asyncTasks request answers (schemas/asyncTasksResponse.schema.json):
// {"python_version", "tasks": [{"id", "name", "state", "thread", "awaited_by": [id...],
// "frames": [{"name", "file", "line"}]}], "torn", "truncated", "missing": [sentence...]}.
// Ids are the task objects' addresses in hex ("0x7f..."), as `python -m asyncio ps` shows them;
// frames are innermost first, as the sampler reads them.
#include <nlohmann/json.hpp>
#include <string>

#include "sampler/async_tasks.hpp"

namespace dapprof::formats {

nlohmann::ordered_json async_tasks_to_json(const sampler::AsyncTasks& tasks,
                                           const std::string& python_version);

}  // namespace dapprof::formats
