#pragma once
// The coroutine chains of many asyncio tasks of a CPython 3.14+ target, read a level at a time:
// every task's outermost coroutine in one batch of reads, then every code object those frames
// run, then what each awaits, and so on inwards. A chain follows the awaited object while it is
// of its coroutine's own type (what a coroutine awaits may also be a future or another
// awaitable, which ends the chain, as CPython's own reader does). One system call reads a level
// of up to 1,024 tasks, where reading each task's chain alone would cost three per coroutine.
#include <vector>

#include "common/result.hpp"
#include "model/frame.hpp"
#include "sampler/python/objects.hpp"
#include "sampler/python/stack_walk.hpp"

namespace dapprof::sampler::python {

class CoroutineChains {
 public:
  CoroutineChains(const Objects& objects, StackWalker& walker)
      : objects_(objects), walker_(walker) {}

  // The innermost coroutine of a chain read and its instruction pointer then: while a
  // suspended task's innermost coroutine stays at that instruction, its chain is unchanged.
  struct Tip {
    Address coro = 0;  // 0: the chain has no frame
    Address instr = 0;
  };
  // For each of `coros` (0: none, an empty chain), its frames innermost first, or TornRead if
  // some object of it read as nonsense. A chain stops at `max_length` coroutines, which sets
  // `truncated`. `tips`, if given, receives each chain's Tip, parallel to `coros`.
  std::vector<Result<std::vector<model::Frame>>> read(const std::vector<Address>& coros,
                                                      std::size_t max_length, bool& truncated,
                                                      std::vector<Tip>* tips = nullptr);

 private:
  const Objects& objects_;
  StackWalker& walker_;
};

}  // namespace dapprof::sampler::python
