#include "sampler/loop/sampling_mode.hpp"

namespace dapprof::sampler::loop {

bool reads_sleeping_threads(model::SamplingMode mode) {
  switch (mode) {
    case model::SamplingMode::Active:
    case model::SamplingMode::Cpu:
      return false;
    // A GIL holder may block in a call that keeps it; an exception may be handled by waiting.
    case model::SamplingMode::Wall:
    case model::SamplingMode::Gil:
    case model::SamplingMode::Exception:
      break;
  }
  return true;
}

bool reads_exceptions(model::SamplingMode mode) { return mode == model::SamplingMode::Exception; }

bool select(model::SamplingMode mode, model::ThreadStack& thread) {
  switch (mode) {
    case model::SamplingMode::Active:
      return thread.active;
    case model::SamplingMode::Wall:
      return true;
    case model::SamplingMode::Cpu:
      return thread.on_cpu;
    case model::SamplingMode::Gil:
      return thread.owns_gil;
    case model::SamplingMode::Exception:
      if (thread.exception.empty()) return false;
      thread.frames.insert(thread.frames.begin(), model::exception_frame(thread.exception));
      return true;
  }
  return false;
}

}  // namespace dapprof::sampler::loop
