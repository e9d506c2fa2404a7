#pragma once
#include <CLI/CLI.hpp>

namespace dapprof::adapter {
// Adds `stdio` and `serve`; their callbacks store the process exit code in exit_code.
void add_commands(CLI::App& app, int& exit_code);
}  // namespace dapprof::adapter
