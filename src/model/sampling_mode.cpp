#include <array>
#include <utility>

#include "model/sampling_settings.hpp"

namespace dapprof::model {
namespace {

constexpr std::array<std::pair<std::string_view, SamplingMode>, 5> kNames = {{
    {"active", SamplingMode::Active},
    {"wall", SamplingMode::Wall},
    {"cpu", SamplingMode::Cpu},
    {"gil", SamplingMode::Gil},
    {"exception", SamplingMode::Exception},
}};

}  // namespace

std::string_view sampling_mode_name(SamplingMode mode) {
  for (const auto& [name, m] : kNames)
    if (m == mode) return name;
  return "active";
}

std::optional<SamplingMode> sampling_mode_named(std::string_view name) {
  for (const auto& [n, m] : kNames)
    if (n == name) return m;
  return std::nullopt;
}

std::optional<SamplingMode> sampling_mode_with_aliases(SamplingMode mode, bool idle, bool gil) {
  if (!idle && !gil) return mode;
  const SamplingMode aliased = gil ? SamplingMode::Gil : SamplingMode::Wall;
  if (mode != SamplingMode::Active && mode != aliased) return std::nullopt;
  return aliased;
}

}  // namespace dapprof::model
