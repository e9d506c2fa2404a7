#pragma once
// startProfiling's sampling fields as the sampler takes them: the one place where the request's
// arguments become model::SamplingSettings.
#include "model/sampling_settings.hpp"
#include "protocol/messages.hpp"

namespace dapprof::protocol {

model::SamplingSettings sampling_settings(const StartProfilingArguments& arguments);

}  // namespace dapprof::protocol
