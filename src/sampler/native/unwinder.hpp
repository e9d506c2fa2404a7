#pragma once
// Native stacks of another process's threads, unwound from outside with libunwind (DWARF CFI of
// each module, frame pointers where there is none), while the threads are ptrace-stopped.
//
// One libunwind address space per process, with its cache of unwind rules by address (flushed
// when the module map changes). Unwind tables are looked up through libunwind's ptrace helpers
// (_UPT_*), one handle per module: a handle keeps the one ELF image it last used, so sharing one
// per thread would re-read /proc/PID/maps and re-map a file whenever a stack crosses modules.
// Memory is read with process_vm_readv a page at a time, not one ptrace call per word; the
// registers of a thread with one PTRACE_GETREGSET.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "sampler/native/module_map.hpp"

namespace dapprof::sampler::native {

inline constexpr std::size_t kMaxNativeFrames = 512;

struct NativeStack {
  // Innermost first. For every frame but the innermost, the return address minus one: an
  // address inside the call instruction, so that a call at a function's very end (to a
  // function that does not return) is not taken for the next function.
  std::vector<std::uint64_t> addresses;
  // Each frame's stack pointer (same index): its locals lie from there up to the next one's.
  std::vector<std::uint64_t> stack_pointers;
  bool truncated = false;  // the unwind failed before the outermost frame
};

class Unwinder {
 public:
  // `modules` must outlive the unwinder. Fails only if libunwind cannot make an address space.
  static Result<std::unique_ptr<Unwinder>> create(ModuleMap& modules);
  ~Unwinder();
  Unwinder(const Unwinder&) = delete;
  Unwinder& operator=(const Unwinder&) = delete;

  // `tid` must be ptrace-stopped by the calling thread. An error if its registers cannot be read
  // (it exited); a stack cut short is `truncated`, not an error.
  Result<NativeStack> unwind(pid_t tid);

  // process_vm_readv calls made so far (for benchmarks).
  std::uint64_t memory_reads() const;

  struct Impl;  // libunwind's types stay out of this header

 private:
  explicit Unwinder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dapprof::sampler::native
