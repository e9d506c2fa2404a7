#include "protocol/sampling.hpp"

#include <fmt/format.h>

namespace dapprof::protocol {

namespace {

model::AsyncMode async_mode(AsyncMode mode) {
  switch (mode) {
    case AsyncMode::Running:
      return model::AsyncMode::Running;
    case AsyncMode::All:
      return model::AsyncMode::All;
    case AsyncMode::Off:
      break;
  }
  return model::AsyncMode::Off;
}

}  // namespace

SamplingMode protocol_mode(model::SamplingMode mode) {
  return parse_sampling_mode(model::sampling_mode_name(mode)).value_or(SamplingMode::Active);
}

Result<model::SamplingSettings> sampling_settings(const StartProfilingArguments& arguments) {
  const auto named = model::sampling_mode_named(to_string(arguments.mode));
  const auto mode = model::sampling_mode_with_aliases(named.value_or(model::SamplingMode::Active),
                                                      arguments.idle, arguments.gil);
  if (!mode)
    return Error{fmt::format("'mode' \"{}\" conflicts with {}: 'idle' is mode \"wall\" and 'gil' "
                             "mode \"gil\"; send only 'mode'",
                             to_string(arguments.mode),
                             arguments.idle && arguments.gil ? "'idle' and 'gil'"
                             : arguments.idle                ? "'idle'"
                                                             : "'gil'"),
                 ErrorCode::InvalidArgument};
  return model::SamplingSettings{.rate_hz = static_cast<double>(arguments.rate),
                                 .nonblocking = arguments.nonblocking,
                                 .mode = *mode,
                                 .native = arguments.native,
                                 .gc = arguments.gc,
                                 .opcodes = arguments.opcodes,
                                 .subprocesses = arguments.subprocesses,
                                 .async = async_mode(arguments.async)};
}

}  // namespace dapprof::protocol
