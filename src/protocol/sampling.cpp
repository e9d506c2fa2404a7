#include "protocol/sampling.hpp"

namespace dapprof::protocol {

model::SamplingSettings sampling_settings(const StartProfilingArguments& arguments) {
  return {.rate_hz = static_cast<double>(arguments.rate),
          .nonblocking = arguments.nonblocking,
          .idle = arguments.idle,
          .gil = arguments.gil,
          .native = arguments.native,
          .subprocesses = arguments.subprocesses};
}

}  // namespace dapprof::protocol
