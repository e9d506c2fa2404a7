#pragma once
#include <CLI/CLI.hpp>

// The daemon's command line, on top of the adapter: `dapprof stdio` and `dapprof serve`.
namespace dapprof::app::daemon {
// Adds `stdio` and `serve`; their callbacks store the process exit code in exit_code.
void add_commands(CLI::App& app, int& exit_code);
}  // namespace dapprof::app::daemon
