#pragma once
// The asyncio task tree of dump --async, drawn as CPython's `python -m asyncio pstree` draws it:
// every task not awaited by another is a root; under a task, the frames of its coroutine chain
// (outermost first) lead to the tasks it awaits from there, and a task that awaits no task ends
// in its own frames. Frames shared by several awaited tasks are drawn once.
#include <string>
#include <vector>

#include "sampler/async_tasks.hpp"

namespace dapprof::app::cli {

// The lines of the tree, or, if tasks await each other in a cycle (which has no tree), an empty
// list and `cycle` naming the tasks of one cycle.
std::vector<std::string> task_tree(const sampler::AsyncTasks& tasks, std::string& cycle);

}  // namespace dapprof::app::cli
