#pragma once
#include <CLI/CLI.hpp>

namespace dapprof::app::cli {
// Adds `record`, `top`, `dump`, `ps` and `convert`; their callbacks store the process exit code
// in exit_code.
void add_commands(CLI::App& app, int& exit_code);
}  // namespace dapprof::app::cli
