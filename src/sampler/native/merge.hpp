#pragma once
// Merging a thread's native stack with its Python stack, as py-spy's --native does: each native
// frame of the interpreter's evaluation loop is replaced by the Python frames that call of the
// loop was running; native frames between them (a C function called from Python that calls back
// into Python: sorted(key=...), map, C callbacks) stay where they are. Pure functions, so that
// every version's rule can be tested with hand-built stacks.
//
// How many Python frames one C-level call of _PyEval_EvalFrameDefault runs:
//   3.8-3.10  one: every Python call goes through C
//   3.11      from the innermost frame up to the first with _PyInterpreterFrame.is_entry set
//   3.12+     up to the next shim frame (owner 3: FRAME_OWNED_BY_CSTACK, on 3.14+
//             FRAME_OWNED_BY_INTERPRETER) that the call pushed
// The stack walker reports these as `eval_groups`.
//
// Which native frames are the evaluation loop: by name (_PyEval_EvalFrameDefault) up to 3.11.
// From 3.12 on, the shim frame is a local variable of the C function running the loop, so the
// native frame whose stack range holds a shim's address is that call, whatever its name: builds
// whose loop has no symbol (stripped, split into parts, or a tail-calling interpreter whose
// opcode handlers replace it on the stack, as Debian's 3.14 and 3.15 are) merge just as well.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/frame.hpp"

namespace dapprof::sampler::native {

enum class Role : std::uint8_t {
  Other,  // worth showing: a C extension, libc, the implementation of a builtin
  Eval,   // the interpreter's evaluation loop: stands for Python frames
  Noise,  // call machinery of the interpreter, process and thread start-up: dropped by default
  // Code of the interpreter that nothing names (a stripped build without debug information):
  // kept wherever it is, like Other. Between two Python frames it may be call machinery, but it
  // may as well be the C function that called back into Python (list.sort with a key): a stack
  // that skips a caller is wrong, one with an extra frame only longer.
  Unnamed,
};

struct NativeFrame {
  std::string function;  // demangled; "libfoo.so+0x1234" (function start) or "0xADDR" if unknown
  std::string module;    // path of the mapped file; "" if the address is in no file
  std::string file;      // source file from debug information, "" if none
  int line = 0;
  bool symbolized = false;   // `function` is a symbol's name
  bool interpreter = false;  // in libpython or the python executable
  Role role = Role::Other;
};

// Role of a native frame. Call machinery is recognised by name only inside the interpreter's
// own binary (elsewhere the same names mean something else).
Role classify(std::string_view function, bool symbolized, bool interpreter);

struct MergeInput {
  std::span<const NativeFrame* const> native;  // innermost first
  std::span<const model::Frame> python;        // innermost first
  std::span<const std::uint32_t> eval_groups;  // Python frames per eval call, innermost first
  bool keep_all = false;  // keep noise, and native frames outside the outermost Python frame
  // 3.12+: the address of each eval call's shim frame (innermost first, as eval_groups), and
  // each native frame's stack pointer; empty where unknown (then the loop is found by name).
  std::span<const std::uint64_t> eval_entries;
  std::span<const std::uint64_t> stack_pointers;
};

// Innermost first. When the two stacks disagree on the number of eval calls:
//  - more native eval frames than groups: the innermost ones are calls entering or leaving a
//    Python frame that is not (or no longer) on the Python stack; they show nothing.
//  - fewer: the native unwind stopped early; the Python frames left over go outermost.
// Without keep_all, noise is dropped, and so is everything outside the outermost Python frame.
// If eval_groups does not add up to the Python frames, one frame per eval call is assumed.
std::vector<model::Frame> merge(const MergeInput& in);

}  // namespace dapprof::sampler::native
