#pragma once
// The words of a PyInterpreterState a sample needs: its thread list, the next interpreter, and
// (3.12+, where each interpreter may have its own) its GIL and which thread holds it.
#include <cstdint>
#include <optional>

#include "common/result.hpp"
#include "sampler/process/memory.hpp"
#include "sampler/python/layout.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

struct InterpreterWords {
  Address threads_head = 0;
  Address next = 0;
  Address gil = 0;                 // 3.12+; 0 before (the runtime's GIL)
  Address gil_holder = 0;          // 0 if the GIL is not held
  std::int32_t gc_collecting = 0;  // its collector's flag, when asked for (see gc_state.hpp)
};

// With `gc_flag`, the collector's flag (gc_flag_address) is read in the same batch.
Status read_interpreter_words(const process::ProcessMemory& memory, const Layout& layout,
                              Address interp, InterpreterWords& words,
                              std::optional<Address> gc_flag = std::nullopt);

}  // namespace dapprof::sampler::python
