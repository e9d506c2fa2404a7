#pragma once
// What a finished run gives its client: the file stopProfiling names, and the summary rows.
#include <string>
#include <vector>

#include "common/result.hpp"
#include "formats/profile.hpp"
#include "model/profile_format.hpp"
#include "protocol/messages.hpp"

namespace dapprof::adapter::profiling {

// Written to a temporary file beside `path` and renamed into place, so that a reader never sees
// half a profile and a failed write leaves an earlier file intact. Errors carry OutputFailed.
Status write_profile_file(const formats::Profile& profile, model::ProfileFormat format,
                          const formats::WriteOptions& options, const std::string& path);

// The run's summary rows for the protocol (topFunctions): formats::summarize's, at most
// protocol::kMaxTopFunctions.
std::vector<protocol::FunctionStats> top_functions(const formats::Profile& profile,
                                                   bool hide_debugger);

}  // namespace dapprof::adapter::profiling
