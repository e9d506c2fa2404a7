#pragma once
// Native frames for one process's samples: unwinds the threads while they are stopped, then,
// once they run again, names the frames and merges them with each thread's Python stack.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "model/frame.hpp"
#include "sampler/native/module_map.hpp"
#include "sampler/native/symbolizer.hpp"
#include "sampler/native/unwinder.hpp"

namespace dapprof::sampler::native {

class NativeStacks {
 public:
  // `interpreter_files`: libpython and/or the python executable, as /proc/PID/maps names them.
  // `keep_all`: keep the interpreter's call machinery and the frames outside the outermost
  // Python frame (start-up, thread entry), which are dropped by default.
  static Result<std::unique_ptr<NativeStacks>> create(pid_t pid,
                                                      std::vector<std::string> interpreter_files,
                                                      bool keep_all);

  // While every thread in `tids` is ptrace-stopped by the calling thread. Replaces what the
  // previous call unwound; a thread that cannot be unwound (it exited) gets no native frames.
  void unwind(std::span<const pid_t> tids);
  // Once the threads run again: the Python frames (innermost first) of thread `tid` with its
  // native frames merged in; unchanged if it was not unwound.
  // `eval_entries`: 3.12+, the shim frame address of each group (see MergeInput).
  std::vector<model::Frame> merge(pid_t tid, std::vector<model::Frame> python,
                                  std::span<const std::uint32_t> eval_groups,
                                  std::span<const std::uint64_t> eval_entries = {});

  std::uint64_t unwind_failures() const { return failures_; }
  std::uint64_t memory_reads() const { return unwinder_->memory_reads(); }

 private:
  NativeStacks(pid_t pid, std::vector<std::string> interpreter_files, bool keep_all);

  ModuleMap modules_;
  Symbolizer symbolizer_;
  std::unique_ptr<Unwinder> unwinder_;
  bool keep_all_;
  std::unordered_map<pid_t, NativeStack> stacks_;  // of the last unwind()
  std::uint64_t failures_ = 0;
};

}  // namespace dapprof::sampler::native
