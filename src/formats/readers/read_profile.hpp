#pragma once
// Reading profiles recorded elsewhere (or by dapprof) back into the profile model, so that every
// surface that shows or writes a profile does so for a file too. The format is told by the
// content, not by the file's name.
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "formats/profile.hpp"

namespace dapprof::formats {

enum class InputFormat {
  Speedscope,  // speedscope's JSON, sampled and evented profiles
  Cpuprofile,  // V8's .cpuprofile (Chrome DevTools, Node.js, dapprof)
  Collapsed,   // "frame;frame;frame count" lines: flamegraph.pl, py-spy's and dapprof's raw
  Stream,      // profilingData events, one DAP event a line: convert's stream, a client's copy of a run
};

std::string_view input_format_name(InputFormat format);

struct ReadProfile {
  InputFormat format;
  Profile profile;
};

// `name` is what messages call the document (its file name). Errors are InvalidArgument and say
// what is wrong where (a line, a field).
Result<ReadProfile> read_profile(std::string_view content, std::string_view name);
// Reads the file whole; a file that cannot be read is an error naming it and the reason.
Result<ReadProfile> read_profile_file(const std::string& path);

}  // namespace dapprof::formats
