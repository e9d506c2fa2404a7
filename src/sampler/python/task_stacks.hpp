#pragma once
// What a sample is in an async sampling mode (model::AsyncMode), decided here once: a task's stack
// is its own frames (innermost first: a running task's thread frames down to its coroutine, a
// waiting task's suspended coroutines down from the one awaiting), then its task frame, then the
// same for the task awaiting it, and so on to a task nothing awaits, then one event-loop frame
// for the loop's machinery beneath. A task awaited by several (a task shared by gather calls)
// is shown under the one at the lowest address, so that its samples stay in one place.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/sampling_settings.hpp"
#include "model/snapshot.hpp"
#include "sampler/async_tasks.hpp"

namespace dapprof::sampler::python {

// The stack of the task at `index` of `tasks.tasks`, innermost first. Bounded by
// AsyncTasks::kMaxChain tasks; an awaiter cycle ends where it repeats.
std::vector<model::Frame> task_stack(const AsyncTasks& tasks, std::size_t index);

// Rewrites `snap` for `mode`: each thread running a task whose frames are known gets that task's
// stack; with AsyncMode::All every other task that no task's stack passes through (the leaves
// of the awaiting tree: a TaskGroup's parent is in its children's stacks) is added as a stack of
// its own, marked waiting_task, on behalf of its loop's thread (`threads` gives the info of threads the snapshot
// left out, by TID). Off leaves the snapshot as it is.
void apply_task_stacks(model::Snapshot& snap, const AsyncTasks& tasks, model::AsyncMode mode,
                       const std::unordered_map<std::uint64_t, model::ThreadInfo>& threads);

}  // namespace dapprof::sampler::python
