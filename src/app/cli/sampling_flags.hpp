#pragma once
// The options `record` and `top` share: how to choose the target (--pid or -- PROGRAM ARGS) and
// how to sample it (--rate, --nonblocking, ...), defined once so both commands read alike.
#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/sampling_settings.hpp"

namespace dapprof::app::cli {

// CLI11's PositiveNumber prints the whole double range in its message; this says it plainly.
const CLI::Validator& positive_number();

struct TargetFlags {
  CLI::Option* pid = nullptr;
  CLI::Option* command = nullptr;
  // Throws CLI::RequiredError unless one of them was given (they exclude each other).
  void require_one() const;
};

// --pid and the program after '--'; `what` says what happens to a running process
// ("sample until Ctrl-C, --duration or its exit").
TargetFlags add_target_flags(CLI::App& command, std::optional<pid_t>& pid,
                             std::vector<std::string>& program, const std::string& what);

// --rate, --nonblocking, --mode (and its older spellings --idle, --gil), --subprocesses,
// --async-aware, --async-mode, --native,
// --native-all.
void add_sampling_flags(CLI::App& command, model::SamplingSettings& sampling, bool& native_all);

// Why the flags cannot be honoured together (--native-all implies --native), if they cannot.
std::optional<std::string> sampling_conflict(const model::SamplingSettings& sampling,
                                             bool native_all);

}  // namespace dapprof::app::cli
