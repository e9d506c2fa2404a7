#pragma once
// The coroutine chains of many asyncio tasks of a CPython 3.8-3.13 target, read a level at a time
// as CoroutineChains reads 3.14's: every task's outermost coroutine in one batch of reads, then
// (3.8-3.10) the frame objects they point at, then the code objects those frames run, then what
// each awaits. Where the versions differ:
//   3.8-3.10  the coroutine points at a PyFrameObject; it awaits when the instruction after its
//             last one is YIELD_FROM, and the awaited object tops the value stack (f_stacktop on
//             3.8-3.9, f_valuestack[f_stackdepth - 1] on 3.10)
//   3.11-3.12 the frame is embedded in the coroutine; it awaits when suspended with RESUME (3.11's
//             RESUME_QUICK in warm code, 3.12's INSTRUMENTED_RESUME under sys.settrace or
//             sys.monitoring) of oparg 2 or more next, the awaited object being
//             localsplus[stacktop - 1]
//   3.13      the same, but the frame state itself says FRAME_SUSPENDED_YIELD_FROM
// A chain follows the awaited object while it is of its coroutine's own type.
#include <vector>

#include "common/result.hpp"
#include "model/frame.hpp"
#include "sampler/python/objects.hpp"
#include "sampler/python/stack_walk.hpp"

namespace dapprof::sampler::python {

class LegacyCoroutineChains {
 public:
  LegacyCoroutineChains(const Objects& objects, StackWalker& walker)
      : objects_(objects), walker_(walker) {}

  // As CoroutineChains::read: for each of `coros` (0: none), its frames innermost first, or
  // TornRead; a chain stops at `max_length` coroutines, setting `truncated`.
  std::vector<Result<std::vector<model::Frame>>> read(const std::vector<Address>& coros,
                                                      std::size_t max_length, bool& truncated);

  // The address of the frame coroutine `coro` runs in, as a thread's stack walk reports its
  // frames (3.8-3.10 its frame object, 0 once finished; 3.11+ the frame embedded in it).
  Result<Address> frame_of(Address coro) const;

 private:
  struct Chain;
  // One level: the coroutines each active chain is at, up to their frames' code and lines; then
  // what each awaits, which is where the next level starts.
  void read_level(std::vector<Chain>& chains, const std::vector<std::size_t>& active);
  void read_awaited(std::vector<Chain>& chains, const std::vector<std::size_t>& awaiting);

  const Objects& objects_;
  StackWalker& walker_;
};

}  // namespace dapprof::sampler::python
