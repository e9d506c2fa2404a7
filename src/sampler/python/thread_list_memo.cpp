#include "sampler/python/thread_list_memo.hpp"

#include <algorithm>

namespace dapprof::sampler::python {

std::optional<std::vector<RawThread>> ThreadListMemo::from_memo(
    const StackWalker& walker, Address interp, const List& list,
    const std::function<bool(const RawThread&)>& asleep) const {
  std::vector<RawThread> out;
  out.reserve(list.threads.size());
  for (const RawThread& kept : list.threads) {
    if (asleep(kept)) {
      RawThread t = kept;
      t.top_frame = 0;
      t.top_read = false;
      out.push_back(t);
      continue;
    }
    auto t = walker.thread(interp, kept.tstate);
    // Another thread there, or linking elsewhere: the list changed beside it.
    if (!t || t->next != kept.next || t->thread_id != kept.thread_id ||
        t->native_thread_id != kept.native_thread_id)
      return std::nullopt;
    out.push_back(*t);
  }
  return out;
}

Result<std::vector<RawThread>> ThreadListMemo::threads(
    const StackWalker& walker, Address interp, Address head, Clock::time_point now,
    const std::function<bool(const RawThread&)>& asleep) {
  const auto it = lists_.find(interp);
  if (it != lists_.end() && it->second.head == head && now - it->second.read < kMaxAge) {
    if (auto kept = from_memo(walker, interp, it->second, asleep)) return std::move(*kept);
  }
  auto read = walker.threads(interp, head, asleep);
  if (!read) {
    lists_.erase(interp);
    return read.error();
  }
  lists_[interp] = {head, *read, now};
  return read;
}

void ThreadListMemo::retain(const std::vector<Address>& interps) {
  std::erase_if(lists_, [&](const auto& entry) {
    return std::find(interps.begin(), interps.end(), entry.first) == interps.end();
  });
}

}  // namespace dapprof::sampler::python
