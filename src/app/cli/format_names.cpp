#include "app/cli/format_names.hpp"

#include <array>
#include <utility>

namespace dapprof::app::cli {
namespace {

using model::ProfileFormat;

constexpr std::array<std::pair<std::string_view, ProfileFormat>, 7> kNames = {{
    {"flamegraph", ProfileFormat::Flamegraph},
    {"speedscope", ProfileFormat::Speedscope},
    {"raw", ProfileFormat::Collapsed},
    {"chrometrace", ProfileFormat::ChromeTrace},
    {"cpuprofile", ProfileFormat::Cpuprofile},
    {"pprof", ProfileFormat::Pprof},
    {"gecko", ProfileFormat::Gecko},
}};
static_assert(kNames.size() == model::kProfileFormats.size(), "a format without a name");

}  // namespace

std::optional<ProfileFormat> parse_format(std::string_view name) {
  for (const auto& [spelled, format] : kNames) {
    if (spelled == name) return format;
  }
  return std::nullopt;
}

std::vector<std::string> format_names() {
  std::vector<std::string> names;
  for (const auto& entry : kNames) names.emplace_back(entry.first);
  return names;
}

}  // namespace dapprof::app::cli
