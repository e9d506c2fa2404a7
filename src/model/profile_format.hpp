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
};

inline constexpr std::array kProfileFormats = {ProfileFormat::Speedscope, ProfileFormat::Flamegraph,
                                               ProfileFormat::Collapsed, ProfileFormat::ChromeTrace,
                                               ProfileFormat::Cpuprofile};

// Without the dot: "json", "svg", "txt", "json", "cpuprofile".
std::string_view file_extension(ProfileFormat format);

}  // namespace dapprof::model
