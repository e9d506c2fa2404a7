#pragma once
// The JSON produced by dump_line_tables.py under every installed interpreter (line tables with
// CPython's own line for each instruction, raw str objects, _Py_DebugOffsets), run once per test
// executable.
#include <nlohmann/json.hpp>
#include <string>

namespace dapprof::sampler::python::testing {

// {"interpreters": [{"label", "version", "functions", "strings", "debug_offsets"}], "missing"}
const nlohmann::json& interpreter_data();

std::vector<unsigned char> from_hex(const std::string& hex);

}  // namespace dapprof::sampler::python::testing
