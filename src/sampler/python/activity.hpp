#pragma once
// Whether a thread is doing work. The kernel's view comes first (a thread not running or runnable
// is idle); on top of it, a thread whose innermost Python frame is one of a few well-known
// waiting functions is idle too, even when the kernel caught it between two waits (py-spy uses
// the same kind of heuristic). The list is deliberately short: waiting on a lock or condition
// (threading), selectors/select loops (asyncio's idle event loop), socket accept.
#include <span>

#include "model/frame.hpp"

namespace dapprof::sampler::python {

bool in_waiting_function(std::span<const model::Frame> frames);

}  // namespace dapprof::sampler::python
