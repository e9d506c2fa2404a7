#pragma once
// `dapprof stdio`: one debug session over stdin/stdout (VS Code's DebugAdapterExecutable).
#include "adapter/options.hpp"

namespace dapprof::adapter {

// Runs the session to its end (or SIGINT/SIGTERM); returns the process exit code.
int run_stdio(const Options& options);

}  // namespace dapprof::adapter
