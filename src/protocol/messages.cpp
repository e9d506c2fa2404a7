// The hand-written part of the protocol's messages; the rest is protocol/generated/messages.cpp.
#include "protocol/messages.hpp"

#include <utility>

namespace dapprof::protocol {

StartProfilingResponse StartProfilingResponse::from(const StartProfilingArguments& enabled,
                                                    pid_t pid, std::string python_version) {
  StartProfilingResponse response;
  response.pid = pid;
  response.python_version = std::move(python_version);
  response.rate = enabled.rate;
  response.native = enabled.native;
  response.nonblocking = enabled.nonblocking;
  response.idle = enabled.idle;
  response.gil = enabled.gil;
  response.subprocesses = enabled.subprocesses;
  response.async = enabled.async;
  response.batch_interval_ms = enabled.batch_interval_ms;
  response.stacks = enabled.stacks;
  return response;
}

}  // namespace dapprof::protocol
