#include "sampler/python/sleepers.hpp"

#include <algorithm>

namespace dapprof::sampler::python {

bool Sleepers::asleep(pid_t tid, Address tstate, Address gil_holder,
                      std::optional<Address> top_frame) const {
  const auto it = memo_.find(tid);
  if (it == memo_.end()) return false;
  const Memo& memo = it->second;
  const bool holds_gil = gil_holder != 0 && gil_holder == tstate;
  return memo.idle && !holds_gil && (!top_frame || *top_frame == memo.top_frame) &&
         now_ - memo.checked < kRecheck;
}

namespace {
bool holds_gil(const Sleepers::Thread& t) { return t.gil_holder != 0 && t.gil_holder == t.tstate; }
}  // namespace

std::unordered_map<pid_t, bool> Sleepers::states(const std::vector<Thread>& threads) {
  std::unordered_map<pid_t, bool> result;
  std::vector<pid_t> tids;
  // When one sleeper is asked again, so is every other past half its time: the sleepers of a
  // program come due together, which leaves whole spans in which all of them are known asleep
  // (what a quiet program's cheap samples need), at the same number of questions.
  std::vector<char> known_asleep(threads.size());
  bool asking = false;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const auto& t = threads[i];
    // A top frame left unread was so because the thread was asleep at this same instant.
    known_asleep[i] = !t.top_frame || asleep(t.tid, t.tstate, t.gil_holder, t.top_frame);
    asking = asking || (t.tid > 0 && !known_asleep[i] && !holds_gil(t));
  }
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const auto& t = threads[i];
    if (t.tid <= 0) continue;
    tids.push_back(t.tid);
    // A thread holding the GIL runs Python, or blocks where every other thread must wait for
    // it: active either way, without asking the kernel (its stat file was a tenth of what a
    // busy thread's sample cost).
    if (holds_gil(t)) {
      result.emplace(t.tid, true);
      continue;
    }
    const auto memo = memo_.find(t.tid);
    const bool half_due = memo != memo_.end() && now_ - memo->second.checked >= kRecheck / 2;
    if (!t.top_frame || (known_asleep[i] && !(asking && half_due))) {
      result.emplace(t.tid, false);
      continue;
    }
    const bool active = kernel_.running(t.tid);
    memo_[t.tid] = {!active, *t.top_frame, now_};
    result.emplace(t.tid, active);
  }
  if (tids.size() != memo_.size()) {
    std::erase_if(memo_, [&](const auto& entry) {
      return std::find(tids.begin(), tids.end(), entry.first) == tids.end();
    });
    kernel_.retain(tids);
  }
  return result;
}

std::optional<std::uint64_t> Sleepers::tid_of(std::uint64_t thread_id) const {
  const auto it = tids_.find(thread_id);
  if (it == tids_.end()) return std::nullopt;
  return it->second;
}

}  // namespace dapprof::sampler::python
