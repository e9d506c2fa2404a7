#pragma once
// Offsets of CPython internals per minor version, generated from each version's headers by
// tools/layouts/generate.py (see layouts_generated.cpp).
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
  std::span<const LayoutField> fields;
};

std::span<const GeneratedLayout> generated_layouts();

}  // namespace dapprof::sampler::python
