#pragma once
// Reading the thread list and each thread's Python stack, per version family:
//   3.8-3.10  PyThreadState.frame -> PyFrameObject chain (f_back), line from f_lasti
//   3.11-3.12 PyThreadState.cframe->current_frame -> _PyInterpreterFrame chain (previous),
//             line from prev_instr
//   3.13      PyThreadState.current_frame -> _PyInterpreterFrame chain, line from instr_ptr
// Frames not yet started (incomplete) and the C-stack shim frames of 3.12+ are skipped, as
// CPython's own traceback code does.
#include <cstdint>
#include <vector>

#include "common/result.hpp"
#include "sampler/python/code_cache.hpp"
#include "sampler/python/objects.hpp"
#include "sampler/sample.hpp"

namespace dapprof::sampler::python {

inline constexpr std::size_t kMaxFrames = 4096;
inline constexpr std::size_t kMaxThreads = 4096;

struct RawThread {
  Address tstate = 0;
  std::uint64_t thread_id = 0;         // pthread_t, as threading.get_ident()
  std::uint64_t native_thread_id = 0;  // Linux TID (3.11+; 0 before)
  Address top_frame = 0;
};

class StackWalker {
 public:
  // nonblocking: the target runs while we read, so inconsistencies are TornRead errors; when
  // paused, a walk longer than kMaxFrames is truncated instead.
  StackWalker(const Objects& objects, CodeCache& codes, bool nonblocking)
      : objects_(objects), codes_(codes), nonblocking_(nonblocking) {}

  // All thread states of the interpreter at `interp`, newest first.
  Result<std::vector<RawThread>> threads(Address interp) const;
  // Frames innermost first.
  Result<std::vector<Frame>> walk(Address top_frame);

 private:
  struct RawFrame {
    Address code = 0;
    Address instr = 0;     // 3.11+: current instruction pointer
    std::int64_t lasti = 0;  // 3.8-3.10: f_lasti
    std::uint8_t owner = 0;
  };
  Result<std::vector<RawFrame>> chain(Address top_frame);
  // Reads a frame struct, from a window of the stack read in one go where possible (3.11+ frames
  // are contiguous in the thread's data stack, older frames below newer ones).
  Status read_frame(Address frame, std::byte* out);

  const Objects& objects_;
  CodeCache& codes_;
  bool nonblocking_;
  std::vector<std::byte> window_;
  Address window_start_ = 0;
};

}  // namespace dapprof::sampler::python
