#pragma once
// Where things are inside one CPython process's structures. For 3.8-3.12: the generated table of
// its minor version (layouts_generated.cpp) turned into named members. For 3.13+: the offsets the
// target itself publishes in _Py_DebugOffsets at the start of _PyRuntime, read at attach, over
// that table (which covers what the debug offsets leave out, and cross-checks the rest).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace dapprof::sampler::python {

inline constexpr std::uint64_t kAbsent = ~std::uint64_t{0};

struct Layout {
  int major = 0;
  int minor = 0;

  // _PyRuntimeState
  std::uint64_t runtime_interpreters_head = kAbsent;
  std::uint64_t runtime_tstate_current = kAbsent;  // GIL holder, 3.8-3.11
  // The collector's `collecting` flag (an int): in the runtime (3.7-3.8) or in each interpreter
  // (3.9+). Absent: no garbage collection frames.
  std::uint64_t runtime_gc_collecting = kAbsent;
  std::uint64_t interp_gc_collecting = kAbsent;
  // PyInterpreterState
  std::uint64_t interp_next = kAbsent;
  std::uint64_t interp_threads_head = kAbsent;
  std::uint64_t interp_modules = kAbsent;
  std::uint64_t interp_ceval_gil = kAbsent;  // pointer to the GIL, 3.12+
  std::uint64_t gil_locked = kAbsent;        // inside struct _gil_runtime_state
  std::uint64_t gil_last_holder = kAbsent;
  // PyThreadState
  std::uint64_t tstate_size = kAbsent;
  std::uint64_t tstate_next = kAbsent;
  std::uint64_t tstate_interp = kAbsent;
  std::uint64_t tstate_frame = kAbsent;          // PyFrameObject*, 3.8-3.10
  std::uint64_t tstate_cframe = kAbsent;         // _PyCFrame*, 3.11-3.12
  std::uint64_t cframe_current_frame = kAbsent;  // inside _PyCFrame
  std::uint64_t tstate_current_frame = kAbsent;  // 3.13+
  std::uint64_t tstate_thread_id = kAbsent;
  std::uint64_t tstate_native_thread_id = kAbsent;  // 3.11+
  // The exceptions being handled (_PyErr_StackItem*), innermost first, and in each item the
  // exception (3.11+) or its type (before), and the item it shadows.
  std::uint64_t tstate_exc_info = kAbsent;
  std::uint64_t errstack_previous = kAbsent;
  std::uint64_t errstack_exc_value = kAbsent;
  std::uint64_t errstack_exc_type = kAbsent;  // 3.7-3.10
  // PyFrameObject (3.8-3.10) or _PyInterpreterFrame (3.11+)
  std::uint64_t frame_size = kAbsent;
  std::uint64_t frame_previous = kAbsent;
  std::uint64_t frame_code = kAbsent;
  std::uint64_t frame_lasti = kAbsent;       // int, 3.8-3.10
  std::uint64_t frame_instr = kAbsent;       // _Py_CODEUNIT*, 3.11+
  std::uint64_t frame_owner = kAbsent;       // char, 3.11+
  std::uint64_t frame_localsplus = kAbsent;  // the fast locals (then cells, free variables)
  // PyCodeObject
  std::uint64_t code_size = kAbsent;
  std::uint64_t code_name = kAbsent;
  std::uint64_t code_filename = kAbsent;
  std::uint64_t code_firstlineno = kAbsent;
  std::uint64_t code_linetable = kAbsent;  // co_lnotab (3.8-3.9) or co_linetable
  std::uint64_t code_qualname = kAbsent;   // 3.11+
  std::uint64_t code_code_adaptive = kAbsent;
  std::uint64_t code_firsttraceable = kAbsent;
  // The names of the fast locals: co_varnames, co_cellvars, co_freevars and the count of the
  // first (3.8-3.10), or co_localsplusnames and co_localspluskinds (3.11+).
  std::uint64_t code_argcount = kAbsent;  // ints: the arguments are the first locals
  std::uint64_t code_kwonlyargcount = kAbsent;
  std::uint64_t code_flags = kAbsent;  // CO_VARARGS, CO_VARKEYWORDS add one each
  std::uint64_t code_nlocals = kAbsent;
  std::uint64_t code_varnames = kAbsent;
  std::uint64_t code_cellvars = kAbsent;
  std::uint64_t code_freevars = kAbsent;
  std::uint64_t code_localsplusnames = kAbsent;
  std::uint64_t code_localspluskinds = kAbsent;
  // sys.monitoring's data of a code object (3.12+, null until a tool instruments it): where an
  // INSTRUMENTED_LINE or INSTRUMENTED_INSTRUCTION keeps the opcode it replaced, per code unit.
  std::uint64_t code_monitoring = kAbsent;  // _PyCoMonitoringData*
  std::uint64_t monitoring_lines = kAbsent;
  std::uint64_t monitoring_per_instruction_opcodes = kAbsent;
  // How `lines` holds those opcodes, which changed in the patch release 3.13.3: false, entries of
  // two bytes from its start, the opcode first (3.12-3.13.2); true, a byte giving the entry size,
  // then the entries, the opcode first (3.13.3+). Set from the target's full version.
  bool monitoring_lines_sized = false;
  // str, bytes, int
  std::uint64_t unicode_length = kAbsent;
  std::uint64_t unicode_state = kAbsent;
  std::uint64_t unicode_ascii_size = kAbsent;
  std::uint64_t unicode_compact_size = kAbsent;
  std::uint64_t bytes_size = kAbsent;
  std::uint64_t bytes_sval = kAbsent;
  std::uint64_t long_size = kAbsent;  // ob_size (3.8-3.11) or lv_tag (3.12+)
  std::uint64_t long_digit = kAbsent;
  // tuples, lists, floats, cells
  std::uint64_t tuple_size = kAbsent;
  std::uint64_t tuple_items = kAbsent;
  std::uint64_t list_size = kAbsent;
  std::uint64_t float_value = kAbsent;
  std::uint64_t cell_ref = kAbsent;
  // objects, types, dicts
  std::uint64_t object_type = kAbsent;
  std::uint64_t type_name = kAbsent;  // tp_name, a C string
  std::uint64_t type_basicsize = kAbsent;
  std::uint64_t type_dictoffset = kAbsent;
  std::uint64_t type_flags = kAbsent;
  std::uint64_t heaptype_cached_keys = kAbsent;  // 3.11+
  std::uint64_t dict_used = kAbsent;
  std::uint64_t dict_keys = kAbsent;
  std::uint64_t dict_values = kAbsent;
  std::uint64_t keys_size = kAbsent;  // 3.8-3.10
  std::uint64_t keys_log2_size = kAbsent;
  std::uint64_t keys_log2_index_bytes = kAbsent;
  std::uint64_t keys_kind = kAbsent;
  std::uint64_t keys_nentries = kAbsent;
  std::uint64_t keys_indices = kAbsent;
  std::uint64_t keys_entry_size = kAbsent;
  std::uint64_t keys_unicode_entry_size = kAbsent;
  std::uint64_t values_values = kAbsent;  // PyDictValues.values, 3.13+ (0 before)
  // Generators and coroutines, sets (3.14+: what the asyncio task reader needs)
  std::uint64_t gen_size = kAbsent;
  std::uint64_t gen_iframe = kAbsent;  // the frame, embedded in the object
  std::uint64_t gen_frame_state = kAbsent;
  std::uint64_t gen_state_suspended_yield_from = kAbsent;  // gi_frame_state values, as a byte
  std::uint64_t gen_state_cleared = kAbsent;
  std::uint64_t frame_stackpointer = kAbsent;  // _PyInterpreterFrame.stackpointer
  std::uint64_t set_used = kAbsent;
  std::uint64_t set_mask = kAbsent;
  std::uint64_t set_table = kAbsent;
  std::uint64_t set_entry_size = kAbsent;
  // 3.8-3.13's asyncio task reader (asyncio_legacy*.cpp): the C Task and Future of
  // _asynciomodule.c as tools/layouts mirrors them, and what it follows from them.
  std::uint64_t task_size = kAbsent;
  std::uint64_t task_fut_waiter = kAbsent;
  std::uint64_t task_coro = kAbsent;
  std::uint64_t task_name = kAbsent;
  std::uint64_t task_must_cancel = kAbsent;            // int, 3.8-3.12
  std::uint64_t task_num_cancels_requested = kAbsent;  // int, 3.11+
  std::uint64_t future_size = kAbsent;
  std::uint64_t future_loop = kAbsent;
  std::uint64_t future_callback0 = kAbsent;
  std::uint64_t future_callbacks = kAbsent;  // list of (callback, context) tuples, or NULL
  std::uint64_t future_state = kAbsent;      // int: 0 pending, 1 cancelled, 2 finished
  std::uint64_t future_dict = kAbsent;       // 3.8-3.12 (3.13: a managed dict)
  std::uint64_t future_weakreflist = kAbsent;
  std::uint64_t weakref_object = kAbsent;
  std::uint64_t function_closure = kAbsent;
  std::uint64_t method_self = kAbsent;
  std::uint64_t partial_args = kAbsent;  // functools.partial
  std::uint64_t type_base = kAbsent;
  std::uint64_t list_items = kAbsent;
  std::uint64_t gen_frame = kAbsent;                   // PyFrameObject*, 3.8-3.10
  std::uint64_t gen_state_suspended = kAbsent;         // 3.11-3.12
  std::uint64_t code_code = kAbsent;                   // co_code (bytes), 3.8-3.10
  std::uint64_t opcode_yield_from = kAbsent;           // 3.8-3.10
  std::uint64_t opcode_resume = kAbsent;               // 3.11-3.12
  std::uint64_t opcode_resume_quick = kAbsent;         // 3.11: RESUME in warm code
  std::uint64_t opcode_instrumented_resume = kAbsent;  // 3.12
  std::uint64_t frame_stacktop = kAbsent;    // PyObject**, 3.8-3.9 (NULL unless suspended)
  std::uint64_t frame_valuestack = kAbsent;  // 3.10
  std::uint64_t frame_stackdepth = kAbsent;  // int, 3.10
  std::uint64_t frame_state = kAbsent;       // 3.10
  std::uint64_t frame_state_suspended = kAbsent;
  std::uint64_t frame_stacktop_index = kAbsent;  // int, in localsplus slots, 3.11-3.13

  // Set when the target is a minor version newer than every generated table whose
  // _Py_DebugOffsets have the shape of a known one (`major.minor` is then the target's version
  // and `borrowed_minor` the known one): it is sampled, and the caller says once that it is
  // untested.
  int borrowed_minor = 0;

  bool at_least(int maj, int min) const { return major > maj || (major == maj && minor >= min); }
};

// A name (of a generated table's field, or of a _Py_DebugOffsets field) bound to the Layout
// member it sets.
struct FieldBinding {
  std::string_view name;
  std::uint64_t Layout::*member;
};

// The layout of a supported minor version from its generated table; UnsupportedVersion
// otherwise. 3.13+ targets need layout_from_debug_offsets.
Result<Layout> layout_for(int major, int minor);

// "3.7 to 3.15": the minor versions that have a generated table.
std::string supported_range();

// The error for process `pid` whose Python `version` dapprof cannot read: `why`, or by default
// the versions it can.
Error unreadable_version(int pid, std::string_view version, std::string_view why = {});

// Whether a version publishes _Py_DebugOffsets (3.13+): its layout is then read from the target
// (layout_from_debug_offsets), not taken from the table alone.
bool has_debug_offsets(int major, int minor);

// Names of the fields a version needs but its layout lacks (empty when complete).
std::string missing_fields(const Layout& layout);

// How many bytes at the start of _PyRuntime to read for layout_from_debug_offsets (the largest
// known _Py_DebugOffsets, with room for a newer minor's additions).
inline constexpr std::size_t kDebugOffsetsReadSize = 2048;

// The layout of a 3.13+ target of version major.minor (from Py_Version) whose _Py_DebugOffsets
// copy is `bytes`. Checks the cookie, that the struct's own version is major.minor, that the
// build is not free-threaded, and that the offsets are plausible; refuses a minor newer than
// every table unless its struct has the shape of a known minor's (then Layout::borrowed_minor).
Result<Layout> layout_from_debug_offsets(int major, int minor, std::span<const std::byte> bytes);

// The names of the Layout fields that layout_from_debug_offsets takes from the target's
// _Py_DebugOffsets for `minor` (the rest come from the generated table).
std::vector<std::string_view> debug_offset_fields(int minor);

}  // namespace dapprof::sampler::python
