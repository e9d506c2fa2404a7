#pragma once
// Whether CPython's garbage collector is collecting, and on which thread: the interpreter's
// `collecting` flag (in _PyRuntime.gc on 3.7-3.8, in each interpreter's gc state on 3.9+), read
// with the words every sample reads anyway, so that it costs no system call of its own. The
// collection runs on the thread holding the GIL. The generation collected is not read: CPython
// keeps it in a local variable of the collector only.
#include <cstdint>
#include <optional>
#include <span>

#include "model/snapshot.hpp"
#include "sampler/python/layout.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

// Where the flag of the collector that interpreter `interp` of the runtime at `runtime` uses is;
// none where the layout does not say.
std::optional<Address> gc_flag_address(const Layout& layout, Address runtime, Address interp);

// Whether thread state `tstate` runs a collection: its interpreter's flag (a C int, as read) is
// set and the thread holds the GIL (`gil_holder`, 0 when nobody does).
bool runs_collection(std::int32_t flag, Address gil_holder, Address tstate);

// Puts the collector's frame (model::gc_frame()) on top of the stack of each thread of `snap`
// whose Python thread id is in `collecting` and that holds the GIL: the threads' own stacks,
// not a task's stack sampled on their behalf.
void add_gc_frames(model::Snapshot& snap, std::span<const std::uint64_t> collecting);

}  // namespace dapprof::sampler::python
