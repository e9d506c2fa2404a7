// What a sample is in the async modes (python/task_stacks.hpp): the stacks built from a set of
// tasks as the readers give them, for the shapes asyncio makes (a TaskGroup, a shared task, a
// cycle, a running task the loop has not entered yet).
#include "sampler/python/task_stacks.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sampler/python/running_tasks.hpp"

namespace dapprof::sampler::python {
namespace {

model::Frame py(std::string function, int line) {
  model::Frame f;
  f.function = std::move(function);
  f.file = "app.py";
  f.line = line;
  return f;
}

AsyncTask task(std::uint64_t id, std::string name, TaskState state, std::vector<std::uint64_t> by,
               std::vector<model::Frame> frames, std::uint64_t tid = 7) {
  AsyncTask t;
  t.id = id;
  t.name = std::move(name);
  t.state = state;
  t.awaited_by = std::move(by);
  t.frames = std::move(frames);
  t.os_thread_id = tid;
  return t;
}

// "name" for Python frames, "[name:state]" for task frames, innermost first.
std::vector<std::string> names(const std::vector<model::Frame>& frames) {
  std::vector<std::string> out;
  for (const auto& f : frames)
    out.push_back(f.task() ? "[" + f.function + ":" +
                                 std::string(model::task_state_name(f.task_state)) + "]"
                           : f.function.str());
  return out;
}

// Task-1 runs main, which waits in a TaskGroup for handler-0 (running crunch) and fetch-0.
AsyncTasks taskgroup() {
  AsyncTasks tasks;
  tasks.tasks.push_back(
      task(0x100, "Task-1", TaskState::Waiting, {}, {py("TaskGroup._aexit", 120), py("main", 10)}));
  tasks.tasks.push_back(task(0x200, "handler-0", TaskState::Running, {0x100},
                             {py("spin", 3), py("crunch", 5), py("handler", 20)}));
  tasks.tasks.push_back(
      task(0x300, "fetch-0", TaskState::Waiting, {0x100}, {py("sleep", 700), py("fetch", 30)}));
  return tasks;
}

model::Snapshot one_thread() {
  model::Snapshot snap;
  snap.pid = 42;
  model::ThreadStack t;
  t.info = {42, 1, 7, "MainThread"};
  t.active = true;
  t.frames = {py("spin", 3),         py("crunch", 5),        py("handler", 20), py("_run", 90),
              py("_run_once", 1900), py("run_forever", 600), py("<module>", 1)};
  snap.threads.push_back(t);
  return snap;
}

TEST(TaskStacks, ARunningTaskStandsUnderItsAwaitersAndOneEventLoopFrame) {
  auto snap = one_thread();
  apply_task_stacks(snap, taskgroup(), model::AsyncMode::Running, {});
  ASSERT_EQ(snap.threads.size(), 1u);
  EXPECT_EQ(
      names(snap.threads[0].frames),
      (std::vector<std::string>{"spin", "crunch", "handler", "[handler-0:running]",
                                "TaskGroup._aexit", "main", "[Task-1:waiting]", "(event loop)"}));
  EXPECT_FALSE(snap.threads[0].waiting_task);
}

TEST(TaskStacks, AllAddsEveryWaitingLeafTaskOnBehalfOfItsThread) {
  auto snap = one_thread();
  auto tasks = taskgroup();
  tasks.tasks.push_back(task(0x400, "idle", TaskState::Cancelling, {}, {py("cleanup", 40)}));
  apply_task_stacks(snap, tasks, model::AsyncMode::All, {});
  // Task-1 waits for its TaskGroup's tasks: its time is theirs, not a stack of its own.
  ASSERT_EQ(snap.threads.size(), 3u);
  EXPECT_EQ(names(snap.threads[1].frames),
            (std::vector<std::string>{"sleep", "fetch", "[fetch-0:waiting]", "TaskGroup._aexit",
                                      "main", "[Task-1:waiting]", "(event loop)"}));
  EXPECT_EQ(names(snap.threads[2].frames),
            (std::vector<std::string>{"cleanup", "[idle:cancelling]", "(event loop)"}));
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_TRUE(snap.threads[i].waiting_task);
    EXPECT_FALSE(snap.threads[i].active);
    EXPECT_EQ(snap.threads[i].info.name, "MainThread");
  }
}

TEST(TaskStacks, AWaitingTaskOfAThreadLeftOutTakesItsInfoFromTheProcess) {
  model::Snapshot snap;  // its only thread was idle, so not in the sample
  snap.pid = 42;
  AsyncTasks tasks;
  tasks.tasks.push_back(task(0x100, "worker", TaskState::Waiting, {}, {py("sleep", 1)}, 9));
  apply_task_stacks(snap, tasks, model::AsyncMode::All, {{9, {42, 3, 9, "loop-thread"}}});
  ASSERT_EQ(snap.threads.size(), 1u);
  EXPECT_EQ(snap.threads[0].info.name, "loop-thread");
  EXPECT_EQ(snap.threads[0].info.os_thread_id, 9u);
}

TEST(TaskStacks, RunningLeavesWaitingTasksAndThreadsWithoutATaskAlone) {
  auto snap = one_thread();
  model::ThreadStack other;
  other.info = {42, 2, 8, "worker"};
  other.frames = {py("work", 1)};
  snap.threads.push_back(other);
  auto tasks = taskgroup();
  tasks.tasks[1].frames.clear();  // the loop has not entered handler-0's coroutine yet
  const auto before = snap.threads;
  apply_task_stacks(snap, tasks, model::AsyncMode::Running, {});
  ASSERT_EQ(snap.threads.size(), 2u);
  EXPECT_EQ(snap.threads[0].frames, before[0].frames);
  EXPECT_EQ(snap.threads[1].frames, before[1].frames);
}

TEST(TaskStacks, ASharedTaskFollowsItsLowestAwaiterAndACycleEnds) {
  AsyncTasks tasks;
  tasks.tasks.push_back(task(0x500, "b", TaskState::Waiting, {}, {py("b", 1)}));
  tasks.tasks.push_back(task(0x400, "a", TaskState::Waiting, {}, {py("a", 1)}));
  tasks.tasks.push_back(
      task(0x600, "shared", TaskState::Waiting, {0x500, 0x400, 0x999}, {py("s", 1)}));
  EXPECT_EQ(names(task_stack(tasks, 2)), (std::vector<std::string>{"s", "[shared:waiting]", "a",
                                                                   "[a:waiting]", "(event loop)"}));
  tasks.tasks[1].awaited_by = {0x600};  // a awaits shared, which awaits a
  EXPECT_EQ(names(task_stack(tasks, 2)), (std::vector<std::string>{"s", "[shared:waiting]", "a",
                                                                   "[a:waiting]", "(event loop)"}));
}

TEST(TaskStacks, OffChangesNothing) {
  auto snap = one_thread();
  const auto before = snap.threads[0].frames;
  apply_task_stacks(snap, taskgroup(), model::AsyncMode::Off, {});
  EXPECT_EQ(snap.threads[0].frames, before);
}

TEST(TaskStacks, FramesDownToKeepsNativeFramesAboveTheCut) {
  const std::vector<model::Frame> stack{
      py("spin", 3),
      {"PyObject_Call", "", 0, model::FrameKind::Native, "libpython.so"},
      py("handler", 20),
      py("_run", 90)};
  EXPECT_EQ(names(frames_down_to(stack, 1)),
            (std::vector<std::string>{"spin", "PyObject_Call", "handler"}));
  EXPECT_TRUE(frames_down_to(stack, 5).empty());
}

}  // namespace
}  // namespace dapprof::sampler::python
