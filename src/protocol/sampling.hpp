#pragma once
// startProfiling's sampling fields as the sampler takes them: the one place where the request's
// arguments become model::SamplingSettings.
#include "common/result.hpp"
#include "model/sampling_settings.hpp"
#include "protocol/messages.hpp"

namespace dapprof::protocol {

// InvalidArgument when `mode` and the older `idle`/`gil` ask for different modes.
Result<model::SamplingSettings> sampling_settings(const StartProfilingArguments& arguments);

// The protocol's name of a mode and back (the same names as the model's).
SamplingMode protocol_mode(model::SamplingMode mode);

}  // namespace dapprof::protocol
