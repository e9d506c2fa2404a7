#include "sampler/native/merge.hpp"

#include <algorithm>
#include <iterator>
#include <numeric>

namespace dapprof::sampler::native {
namespace {

bool is_eval_loop(std::string_view f) {
  // GCC moves the loop's rarely used paths into "_PyEval_EvalFrameDefault.cold": same frame.
  constexpr std::string_view kEval = "_PyEval_EvalFrameDefault";
  return f == kEval || (f.starts_with(kEval) && f[kEval.size()] == '.') ||
         f == "PyEval_EvalFrameEx";
}

// Interpreter functions that only pass a call on (or start the interpreter or a thread).
constexpr std::string_view kMachineryPrefixes[] = {
    "_PyEval_",
    "PyEval_",
    "_PyObject_Call",
    "PyObject_Call",
    "_PyObject_Vectorcall",
    "PyObject_Vectorcall",
    "_PyObject_FastCall",
    "_PyObject_MakeTpCall",
    "PyVectorcall_",
    "_PyVectorcall_",
    "_PyFunction_",
    "PyFunction_",
    "function_code_fastcall",
    "method_vectorcall",
    "cfunction_call",
    "cfunction_vectorcall",
    "_PyCFunction_",
    "PyCFunction_Call",
    "_PyMethodDef_",
    "_PyMethodDescr_",
    "method_call",
    "vectorcall_",
    "call_function",
    "do_call_core",
    "slot_tp_",
    "type_call",
    "gen_send",
    "gen_iternext",
    "_PyGen_Send",
    "PyIter_Send",
    "object_vacall",
    "call_unbound",
    "call_method",
    "_PyRun_",
    "PyRun_",
    "run_mod",
    "run_eval_code_obj",
    "Py_RunMain",
    "Py_BytesMain",
    "pymain_",
    "Py_Main",
    "thread_run",
    "pythread_wrapper",
    "t_bootstrap",
};

// Process and thread start-up, wherever it is.
constexpr std::string_view kStartup[] = {
    "_start", "main",    "__libc_start_main", "__libc_start_call_main", "start_thread", "clone",
    "clone3", "__clone", "__clone3",          "__clone_internal",
};

}  // namespace

Role classify(std::string_view function, bool symbolized, bool interpreter) {
  if (!symbolized) return interpreter ? Role::Unnamed : Role::Other;
  if (is_eval_loop(function)) return Role::Eval;
  if (std::find(std::begin(kStartup), std::end(kStartup), function) != std::end(kStartup))
    return Role::Noise;
  if (!interpreter) return Role::Other;
  for (auto prefix : kMachineryPrefixes)
    if (function.starts_with(prefix)) return Role::Noise;
  return Role::Other;
}

namespace {

// The role of each native frame in this stack: by stack address where the shims are known.
std::vector<Role> roles_of(const MergeInput& in) {
  std::vector<Role> roles;
  roles.reserve(in.native.size());
  for (const NativeFrame* f : in.native) roles.push_back(f->role);
  if (in.eval_entries.empty() || in.stack_pointers.size() != in.native.size()) return roles;
  std::vector<bool> holds(in.native.size(), false);
  std::size_t found = 0;
  for (std::size_t i = 0; i < in.native.size(); ++i) {
    const std::uint64_t low = in.stack_pointers[i];
    const std::uint64_t high =
        i + 1 < in.stack_pointers.size() ? in.stack_pointers[i + 1] : ~std::uint64_t{0};
    for (std::uint64_t entry : in.eval_entries) {
      if (entry >= low && entry < high) holds[i] = true;
    }
    found += holds[i];
  }
  if (found == 0) return roles;  // an unwind that missed every loop frame: names are all left
  for (std::size_t i = 0; i < roles.size(); ++i) {
    if (holds[i]) {
      roles[i] = Role::Eval;
    } else if (roles[i] == Role::Eval) {
      roles[i] = Role::Noise;  // the loop's name, but running no Python frame of this stack
    }
  }
  return roles;
}

}  // namespace

std::vector<model::Frame> merge(const MergeInput& in) {
  const auto& python = in.python;
  const std::vector<Role> roles = roles_of(in);
  std::vector<std::uint32_t> fallback;
  std::span<const std::uint32_t> groups = in.eval_groups;
  if (std::accumulate(groups.begin(), groups.end(), std::size_t{0}) != python.size()) {
    fallback.assign(python.size(), 1);
    groups = fallback;
  }
  std::vector<std::size_t> first(groups.size() + 1, 0);  // index of each group's first frame
  for (std::size_t g = 0; g < groups.size(); ++g) first[g + 1] = first[g] + groups[g];

  const auto evals =
      static_cast<std::ptrdiff_t>(std::count(roles.begin(), roles.end(), Role::Eval));
  const auto count = static_cast<std::ptrdiff_t>(groups.size());
  // Eval frame j (from the innermost) runs group j + shift.
  const std::ptrdiff_t shift = evals > count ? count - evals : 0;

  std::vector<model::Frame> out;
  out.reserve(in.native.size() + python.size());
  std::size_t python_end = 0;  // size of `out` after its outermost Python frame
  const auto emit_group = [&](std::ptrdiff_t g) {
    const auto index = static_cast<std::size_t>(g);
    for (std::size_t i = first[index]; i < first[index + 1]; ++i) out.push_back(python[i]);
    // A call that runs no frame (3.15's base frame, which lives in the thread state) does not
    // move the end of the Python part.
    if (first[index + 1] > first[index]) python_end = out.size();
  };
  const auto emit_native = [&](const NativeFrame& f) {
    model::Frame frame;
    frame.function = f.function;
    frame.file = f.file;
    frame.line = f.line;
    frame.kind = model::FrameKind::Native;
    frame.module = f.module;
    out.push_back(std::move(frame));
  };

  std::ptrdiff_t j = 0;
  for (std::size_t n = 0; n < in.native.size(); ++n) {
    const NativeFrame* f = in.native[n];
    const Role role = roles[n];
    if (role == Role::Eval) {
      const std::ptrdiff_t g = j++ + shift;
      if (g >= 0 && g < count) {
        emit_group(g);
        continue;
      }
      if (in.keep_all) {
        emit_native(*f);
        // Found by the shim it holds: a stripped build's loop has no symbol, but is the loop.
        if (!f->symbolized) out.back().function = "_PyEval_EvalFrameDefault";
      }
      continue;
    }
    if (!in.keep_all && role == Role::Noise) continue;
    emit_native(*f);
  }
  for (std::ptrdiff_t g = j + shift; g < count; ++g) emit_group(g);  // unwinding stopped early
  if (!in.keep_all && !python.empty()) out.resize(python_end);
  return out;
}

}  // namespace dapprof::sampler::native
