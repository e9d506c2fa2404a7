#include "sampler/python/interpreter_words.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace dapprof::sampler::python {

Status read_interpreter_words(const process::ProcessMemory& memory, const Layout& layout,
                              Address interp, InterpreterWords& w, std::optional<Address> gc_flag) {
  std::vector<process::ProcessMemory::Chunk> chunks{
      {interp + layout.interp_threads_head, &w.threads_head, 8},
      {interp + layout.interp_next, &w.next, 8}};
  if (layout.interp_ceval_gil != kAbsent)
    chunks.push_back({interp + layout.interp_ceval_gil, &w.gil, 8});
  if (gc_flag) chunks.push_back({*gc_flag, &w.gc_collecting, sizeof w.gc_collecting});
  if (auto s = memory.read_many(chunks); !s) return s;
  if (w.gil == 0) return Ok{};
  // The GIL's `locked` flag and `last_holder`, in one read of that part of the struct.
  const std::uint64_t lo = std::min(layout.gil_locked, layout.gil_last_holder);
  const std::uint64_t hi = std::max(layout.gil_locked, layout.gil_last_holder) + 8;
  std::array<std::byte, 64> buf{};
  if (hi - lo > buf.size()) return Error{"GIL layout out of range", ErrorCode::TornRead};
  if (auto s = memory.read(w.gil + lo, buf.data(), hi - lo); !s) return s;
  int locked = 0;
  std::memcpy(&locked, buf.data() + (layout.gil_locked - lo), sizeof locked);
  if (locked) std::memcpy(&w.gil_holder, buf.data() + (layout.gil_last_holder - lo), 8);
  return Ok{};
}

}  // namespace dapprof::sampler::python
