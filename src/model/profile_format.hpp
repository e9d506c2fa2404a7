#pragma once
// The file formats a whole profile can be written in. Each surface spells the names its own way
// (the command line as py-spy does, the protocol as its schema does); the format is this one type.
#include <array>
#include <string_view>

namespace dapprof::model {

enum class ProfileFormat {
  Speedscope,   // speedscope's JSON
  Flamegraph,   // interactive SVG
  Collapsed,    // "root;...;leaf count" lines (py-spy's "raw")
  ChromeTrace,  // Chrome trace events
  Cpuprofile,   // V8's .cpuprofile
  Pprof,        // pprof's profile.proto, gzipped (binary)
  Gecko,        // the Firefox Profiler's Gecko profile JSON
};

inline constexpr std::array kProfileFormats = {
    ProfileFormat::Speedscope,  ProfileFormat::Flamegraph, ProfileFormat::Collapsed,
    ProfileFormat::ChromeTrace, ProfileFormat::Cpuprofile, ProfileFormat::Pprof,
    ProfileFormat::Gecko};

// Without the leading dot: "json", "svg", "txt", "json", "cpuprofile", "pb.gz", "json".
std::string_view file_extension(ProfileFormat format);
// Whether the document is text (UTF-8) or bytes; only pprof's is binary.
bool is_binary(ProfileFormat format);

}  // namespace dapprof::model
