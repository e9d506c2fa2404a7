#pragma once
// What each sampling mode (model::SamplingMode) means to the sampler, in one place: which threads
// are read, which are kept, and what a kept thread's stack shows.
#include "model/sampling_settings.hpp"
#include "model/snapshot.hpp"

namespace dapprof::sampler::loop {

// Whether threads the kernel shows asleep must be read at all (AttachOptions::skip_idle is the
// opposite): the modes that may keep one.
bool reads_sleeping_threads(model::SamplingMode mode);
// Whether each thread's handled exception is read (AttachOptions::exceptions).
bool reads_exceptions(model::SamplingMode mode);
// Whether `thread` belongs in a sample of this mode; the mode "exception" also puts the frame of
// the exception the thread handles on top of its stack.
bool select(model::SamplingMode mode, model::ThreadStack& thread);

}  // namespace dapprof::sampler::loop
