#pragma once
// Offsets of CPython internals per minor version, generated from each version's headers by
// tools/layouts/generate.py (see layouts_generated.cpp), for the architecture of the build.
#include <cstdint>
#include <span>
#include <string_view>

namespace dapprof::sampler::python {

struct LayoutField {
  std::string_view name;  // e.g. "tstate.thread_id"
  std::uint64_t value;
};

struct GeneratedLayout {
  int major;
  int minor;
  std::string_view measured_on;  // the full version whose headers produced the table
  // What the table was measured for: the build's architecture, or x86_64 where the build's had
  // no table of this version (fields after a pthread_mutex_t may then be misplaced).
  std::string_view architecture;
  std::span<const LayoutField> fields;
};

std::span<const GeneratedLayout> generated_layouts();

// Logs a warning when `table` was measured for another architecture than the build's: the
// generator had no table of its version for this one, and took x86_64's.
void warn_if_foreign(const GeneratedLayout& table);

// The architecture this build's tables are for, as the generator names it.
#if defined(__aarch64__)
inline constexpr std::string_view kLayoutArchitecture = "aarch64";
#else
inline constexpr std::string_view kLayoutArchitecture = "x86_64";
#endif

}  // namespace dapprof::sampler::python
