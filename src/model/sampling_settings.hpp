#pragma once
// How a profiling run samples, whether `dapprof record` or startProfiling asked for it: the
// settings a user chooses, passed unchanged from the command line or the request to the sampler.
namespace dapprof::model {

struct SamplingSettings {
  double rate_hz = 100;       // samples per second
  bool nonblocking = false;   // false: the target's threads are paused for each read
  bool idle = false;          // keep idle threads
  bool gil = false;           // keep only the thread holding the GIL
  bool native = false;        // merge native frames (needs blocking mode)
  bool subprocesses = false;  // also sample child Python processes as they appear
  bool operator==(const SamplingSettings&) const = default;
};

}  // namespace dapprof::model
