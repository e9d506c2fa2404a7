#pragma once
// Who awaits each task of a CPython 3.8-3.13 target. Those versions record no awaiters, only
// each task's _fut_waiter (what it awaits), so the links are recovered from what the objects keep:
//   await task        the awaiting task's _fut_waiter is the task
//   gather, shield,   the task's done-callbacks are functions whose closures hold the future its
//   asyncio.wait      caller awaits (gather's _GatheringFuture, shield's outer future, wait's
//                     waiter), or (wait_for before 3.12) a functools.partial holding it
//   TaskGroup (3.11+) the task's done-callback is the group's bound _on_task_done, and the group
//                     keeps the task that entered it in _parent_task
// A future no task awaits directly is followed through its own done-callbacks (a gather of
// gathers). A task whose done-callbacks complete a future that leads to no task is named in
// AsyncTasks::missing: something awaits it that is not found this way. Callbacks of other kinds
// (a set's discard, a user's function holding no future) are no awaiters.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "sampler/python/asyncio_legacy_kinds.hpp"
#include "sampler/python/asyncio_legacy_task.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

class LegacyAwaiters {
 public:
  LegacyAwaiters(const Objects& objects, ObjectKinds& kinds, const std::vector<LegacyTask>& tasks);

  // The awaiters of tasks[i], by task id; TornRead if an object on the way read as nonsense.
  // `unfollowed` is set when a future its done-callbacks complete leads to no task.
  Result<std::vector<std::uint64_t>> of(std::size_t i, bool& unfollowed);

 private:
  // Adds the tasks awaiting `future` to `out`.
  Status awaiting(Address future, int depth, std::vector<std::uint64_t>& out);
  // Adds the tasks that the callable `callback` (a done-callback) leads to.
  Status through(Address callback, int depth, std::vector<std::uint64_t>& out);
  Status through_futures_in(Address tuple, int depth, bool cells, std::vector<std::uint64_t>& out);
  // awaiting(), noting a future of the task's own callbacks that leads to no task.
  Status leads_to_tasks(Address future, int depth, std::vector<std::uint64_t>& out);

  const Objects& objects_;
  ObjectKinds& kinds_;
  const std::vector<LegacyTask>& tasks_;
  std::unordered_multimap<Address, std::uint64_t> waiting_on_;  // fut_waiter -> task id
  std::unordered_map<Address, bool> is_task_;
  bool dangling_ = false;
};

}  // namespace dapprof::sampler::python
