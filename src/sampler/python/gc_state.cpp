#include "sampler/python/gc_state.hpp"

#include <algorithm>

namespace dapprof::sampler::python {

std::optional<Address> gc_flag_address(const Layout& layout, Address runtime, Address interp) {
  if (layout.interp_gc_collecting != kAbsent) return interp + layout.interp_gc_collecting;
  if (layout.runtime_gc_collecting != kAbsent) return runtime + layout.runtime_gc_collecting;
  return std::nullopt;
}

bool runs_collection(std::int32_t flag, Address gil_holder, Address tstate) {
  return flag != 0 && gil_holder != 0 && gil_holder == tstate;
}

void add_gc_frames(model::Snapshot& snap, std::span<const std::uint64_t> collecting) {
  if (collecting.empty()) return;
  for (auto& t : snap.threads) {
    if (t.waiting_task || !t.owns_gil ||
        std::find(collecting.begin(), collecting.end(), t.info.thread_id) == collecting.end())
      continue;
    t.frames.insert(t.frames.begin(), model::gc_frame());
  }
}

}  // namespace dapprof::sampler::python
