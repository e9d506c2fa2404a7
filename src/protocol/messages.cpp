// The hand-written part of the protocol's messages; the rest is protocol/generated/messages.cpp.
#include "protocol/messages.hpp"

#include <utility>

#include "protocol/sampling.hpp"

namespace dapprof::protocol {

StartProfilingResponse StartProfilingResponse::from(const StartProfilingArguments& enabled,
                                                    pid_t pid, std::string python_version) {
  StartProfilingResponse response;
  response.pid = pid;
  response.python_version = std::move(python_version);
  response.rate = enabled.rate;
  response.native = enabled.native;
  response.nonblocking = enabled.nonblocking;
  // The mode in effect, however it was asked; the older switches say what it implies.
  const auto mode = sampling_settings(enabled);
  const auto in_effect = mode ? mode->mode : model::SamplingMode::Active;
  response.mode = protocol_mode(in_effect);
  response.idle = in_effect == model::SamplingMode::Wall;
  response.gil = in_effect == model::SamplingMode::Gil;
  response.subprocesses = enabled.subprocesses;
  response.async = enabled.async;
  response.batch_interval_ms = enabled.batch_interval_ms;
  response.stacks = enabled.stacks;
  return response;
}

}  // namespace dapprof::protocol
