#pragma once
// Writes a whole profiling run to the file stopProfiling names, in the format it asks for.
#include <string>

#include "common/result.hpp"
#include "formats/profile.hpp"
#include "model/profile_format.hpp"

namespace dapprof::adapter {

// Written to a temporary file beside `path` and renamed into place, so that a reader never sees
// half a profile and a failed write leaves an earlier file intact. Errors carry OutputFailed.
Status write_profile_file(const formats::Profile& profile, model::ProfileFormat format,
                          const std::string& path);

}  // namespace dapprof::adapter
