#include "protocol/sampling.hpp"

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

model::SamplingSettings sampling_settings(const StartProfilingArguments& arguments) {
  return {.rate_hz = static_cast<double>(arguments.rate),
          .nonblocking = arguments.nonblocking,
          .idle = arguments.idle,
          .gil = arguments.gil,
          .native = arguments.native,
          .gc = arguments.gc,
          .subprocesses = arguments.subprocesses,
          .async = async_mode(arguments.async)};
}

}  // namespace dapprof::protocol
