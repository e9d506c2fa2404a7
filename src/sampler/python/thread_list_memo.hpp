#pragma once
// Each interpreter's thread list, kept from sample to sample so that a sample reads again only
// the thread states of threads not known to be asleep (see Sleepers). A program with dozens of
// sleeping threads then costs a sample about what one with a single thread does: each thread
// state is a heap block of its own, a page the kernel pins for every read of it.
//
// The list is read whole again when its head moved (CPython puts a new thread at the head), when
// a thread read again no longer links to the thread it linked to, or once it is kMaxAge old: a
// thread that ended behind a sleeper leaves the list unseen until then, and is shown as nothing
// meanwhile, a sleeper being shown as nothing anyway.
#include <functional>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "sampler/python/sleepers.hpp"
#include "sampler/python/stack_walk.hpp"

namespace dapprof::sampler::python {

class ThreadListMemo {
 public:
  using Clock = Sleepers::Clock;
  static constexpr auto kMaxAge = Sleepers::kRecheck;

  // The threads of `interp`, whose list starts at `head`, as StackWalker::threads() gives them
  // with `asleep` naming the threads whose top frame is not needed; a thread `asleep` names that
  // was not read again comes back with top_read false and no top frame.
  Result<std::vector<RawThread>> threads(const StackWalker& walker, Address interp, Address head,
                                         Clock::time_point now,
                                         const std::function<bool(const RawThread&)>& asleep);
  // Forgets interpreters not among `interps` (gone, or a list read without the memo).
  void retain(const std::vector<Address>& interps);

 private:
  struct List {
    Address head = 0;
    std::vector<RawThread> threads;
    Clock::time_point read;
  };
  // The list again from the memo, or none if it must be read whole.
  std::optional<std::vector<RawThread>> from_memo(
      const StackWalker& walker, Address interp, const List& list,
      const std::function<bool(const RawThread&)>& asleep) const;
  std::unordered_map<Address, List> lists_;  // by interpreter
};

}  // namespace dapprof::sampler::python
