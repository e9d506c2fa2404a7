// /proc parsing: threads, states, descendants, against real processes.
#include "sampler/process/tasks.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "child.hpp"

namespace dapprof::sampler::process {
namespace {

using namespace std::chrono_literals;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(getpid()) + "-" +
           testing::UnitTest::GetInstance()->current_test_info()->name()))
      .string();
}

TEST(Tasks, ListsThreadsAndTheirStates) {
  const auto counter = temp_path("dapprof-counter");
  test::Child child({test::system_python(), test::target_script("threads.py"), counter, "3"});
  ASSERT_EQ(child.read_line(), "ready");
  auto tids = list_threads(child.pid());
  ASSERT_TRUE(tids) << tids.message();
  EXPECT_EQ(tids->size(), 4u);  // main + 3 spinning threads
  EXPECT_TRUE(std::is_sorted(tids->begin(), tids->end()));
  EXPECT_EQ(tids->front(), child.pid());
  for (pid_t tid : *tids) {
    auto state = thread_state(child.pid(), tid);
    ASSERT_TRUE(state) << state.message();
    EXPECT_NE(std::string("RSDt").find(*state), std::string::npos) << *state;
  }
  // The spinning threads are runnable ('R') at times; watch until one is seen so.
  bool seen_active = false;
  for (int i = 0; i < 20000 && !seen_active; ++i) {
    for (pid_t tid : *tids)
      if (tid != child.pid() && thread_active(child.pid(), tid)) seen_active = true;
  }
  EXPECT_TRUE(seen_active);
  std::filesystem::remove(counter);
}

TEST(Tasks, SleepingThreadIsNotActive) {
  test::Child child(
      {test::system_python(), "-c", "import sys; print('ready', flush=True); sys.stdin.read()"});
  ASSERT_EQ(child.read_line(), "ready");
  // Soon blocked in read(2) on a pipe, sleeping for good since we never write to it.
  Result<char> state = thread_state(child.pid(), child.pid());
  for (int i = 0; i < 1000 && state.ok() && *state != 'S'; ++i) {
    std::this_thread::sleep_for(5ms);
    state = thread_state(child.pid(), child.pid());
  }
  ASSERT_TRUE(state) << state.message();
  EXPECT_EQ(*state, 'S');
  EXPECT_FALSE(thread_active(child.pid(), child.pid()));
  EXPECT_EQ(process_name(child.pid()).substr(0, 6), "python");
}

TEST(Tasks, NonExistentProcess) {
  constexpr pid_t nobody = 0x7ffffff0;  // above any pid_max
  auto tids = list_threads(nobody);
  ASSERT_FALSE(tids);
  EXPECT_EQ(tids.code(), ErrorCode::NoSuchProcess);
  EXPECT_FALSE(thread_state(nobody, nobody));
  EXPECT_FALSE(thread_active(nobody, nobody));
  EXPECT_TRUE(descendants(nobody).empty());
  EXPECT_EQ(process_name(nobody), "");
}

TEST(Tasks, DescendantsOfAProcessTree) {
  test::Child root({test::system_python(), test::target_script("tree.py")});
  const auto line = root.read_line();
  ASSERT_TRUE(line);
  pid_t child = 0, grandchild = 0;
  std::istringstream(*line) >> child >> grandchild;
  ASSERT_GT(child, 0);
  ASSERT_GT(grandchild, 0);

  const auto all = descendants(root.pid());
  EXPECT_EQ(all, (std::vector<pid_t>{std::min(child, grandchild), std::max(child, grandchild)}));
  EXPECT_EQ(descendants(child), std::vector<pid_t>{grandchild});
  EXPECT_TRUE(descendants(grandchild).empty());
  // We are the root's parent: the whole tree is ours.
  const auto mine = descendants(getpid());
  EXPECT_TRUE(std::find(mine.begin(), mine.end(), grandchild) != mine.end());

  EXPECT_TRUE(in_process_tree(root.pid(), root.pid()));
  EXPECT_TRUE(in_process_tree(root.pid(), grandchild));
  EXPECT_TRUE(in_process_tree(child, grandchild));
  EXPECT_FALSE(in_process_tree(child, root.pid()));
  EXPECT_FALSE(in_process_tree(grandchild, child));
  EXPECT_FALSE(in_process_tree(root.pid(), getpid()));

  // The root is killed by its guard; its descendants are not our children to reap.
  ::kill(grandchild, SIGKILL);
  ::kill(child, SIGKILL);
}

}  // namespace
}  // namespace dapprof::sampler::process
