#include "sampler/python/quiet.hpp"

#include <algorithm>

namespace dapprof::sampler::python {

void Quiet::seen(bool eligible, const std::vector<Thread>& threads, const Sleepers& sleepers) {
  valid_ = eligible && !threads.empty() && !gil_words_.empty();
  threads_.clear();
  for (const auto& t : threads) {
    valid_ = valid_ && t.tid > 0 && t.gil_holder == 0 && sleepers.asleep(t.tid, t.tstate, 0);
    threads_.emplace_back(t.tid, t.tstate);
  }
}

bool Quiet::still(Sleepers::Clock::time_point now, Sleepers& sleepers,
                  const process::ProcessMemory& memory) {
  if (!valid_) return false;
  valid_ = false;  // until shown again
  sleepers.begin(now);
  for (const auto& [tid, tstate] : threads_)
    if (!sleepers.asleep(tid, tstate, 0)) return false;
  words_.assign(gil_words_.size(), 0);
  for (std::size_t i = 0; i < gil_words_.size(); ++i) gil_words_[i].out = &words_[i];
  if (!memory.read_many(gil_words_)) return false;
  if (std::any_of(words_.begin(), words_.end(), [](std::uint64_t w) { return w != 0; }))
    return false;
  valid_ = true;
  return true;
}

}  // namespace dapprof::sampler::python
