#pragma once
// `dapprof record --format`: the formats under py-spy's names ("raw" for collapsed stacks) plus
// "cpuprofile", "pprof" and "gecko" (the Firefox Profiler's).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/profile_format.hpp"

namespace dapprof::app::cli {

std::optional<model::ProfileFormat> parse_format(std::string_view name);
// Every name, in the order --help lists them.
std::vector<std::string> format_names();

}  // namespace dapprof::app::cli
