// Interning stacks: the shortcut through a thread's previous stack gives the same frames, stacks
// and indices as looking every frame up, for frames that differ in any one field.
#include "formats/stack_table.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "formats/profile.hpp"

namespace dapprof::formats {
namespace {

using model::Frame;
using model::FrameKind;
using model::FrameOrigin;

// Frames that are equal but for one field, and a debugger frame given both ways (classified from
// Program, and Debugger already): all distinct frames.
std::vector<Frame> frame_pool() {
  const Frame base{"work", "app.py", 10, FrameKind::Python, ""};
  std::vector<Frame> pool{base};
  auto f = base;
  f.line = 11;
  pool.push_back(f);
  f = base;
  f.function = "worK";
  pool.push_back(f);
  f = base;
  f.file = "app.pY";
  pool.push_back(f);
  f = base;
  f.kind = FrameKind::Native;
  pool.push_back(f);
  f.module = "libx.so";
  pool.push_back(f);
  f = base;
  f.origin = FrameOrigin::Debugger;
  pool.push_back(f);
  const Frame pydevd{"run", "/x/debugpy/_vendored/pydevd/pydevd.py", 5, FrameKind::Python, ""};
  pool.push_back(pydevd);
  f = pydevd;
  f.origin = FrameOrigin::Debugger;
  pool.push_back(f);
  for (int i = 0; i < 20; ++i)
    pool.push_back({"f" + std::to_string(i), "lib.py", i, FrameKind::Python, ""});
  return pool;
}

TEST(StackTable, FramesDifferingInOneFieldAreDistinct) {
  StackTable table;
  const auto pool = frame_pool();
  for (const auto& f : pool) table.add_frame(f);
  ASSERT_EQ(table.frames().size(), pool.size());
  // Both pydevd frames are the debugger's once kept, yet two frames, as they were given.
  EXPECT_EQ(table.frames()[7].origin, FrameOrigin::Debugger);
  EXPECT_EQ(table.frames()[8].origin, FrameOrigin::Debugger);
  for (std::uint32_t i = 0; i < pool.size(); ++i) EXPECT_EQ(table.add_frame(pool[i]), i);
}

TEST(StackTable, PreviousStackShortcutMatchesFullLookup) {
  const auto pool = frame_pool();
  std::mt19937 rng(7);
  // Per thread a stack that changes like a program's: its innermost frames, now and then deeper.
  constexpr int kThreads = 5;
  std::vector<std::vector<Frame>> current(kThreads, std::vector<Frame>{pool[0]});
  Profile fast, slow;
  const auto start = std::chrono::steady_clock::now();
  for (int tick = 0; tick < 20'000; ++tick) {
    model::Snapshot snap;
    snap.time = start + std::chrono::microseconds(tick * 1000);
    for (int t = 0; t < kThreads; ++t) {
      auto& stack = current[static_cast<std::size_t>(t)];  // innermost first
      if (stack.empty()) stack.push_back(pool[0]);         // empty for one sample, then again
      const auto r = rng() % 10;
      if (r < 3 && stack.size() > 1)
        stack.erase(stack.begin(),
                    stack.begin() + 1 + rng() % std::min<std::size_t>(stack.size() - 1, 3));
      if (r >= 3 && r < 6 && stack.size() < 50)
        stack.insert(stack.begin(), pool[rng() % pool.size()]);
      if (r == 6) stack.front() = pool[rng() % pool.size()];
      if (r == 7) stack[rng() % stack.size()] = pool[rng() % pool.size()];
      if (r == 8 && tick % 100 == 0) stack.clear();
      model::ThreadStack ts;
      ts.info = {1, static_cast<std::uint64_t>(t), static_cast<std::uint64_t>(100 + t), ""};
      ts.frames = stack;
      ts.active = r % 2 == 0;
      ts.owns_gil = r % 3 == 0;
      snap.threads.push_back(ts);
      // The same stack through the lookup of every frame, and the state as a snapshot gives it.
      slow.add_sample(slow.add_thread(ts.info), slow.add_stack(ts.frames), tick * 1000, 1,
                      {.known = true, .active = ts.active, .gil = ts.owns_gil});
    }
    fast.add_snapshot(snap, start);
  }
  EXPECT_EQ(fast.frames(), slow.frames());
  EXPECT_EQ(fast.stacks(), slow.stacks());
  EXPECT_EQ(fast.threads(), slow.threads());
  const std::vector<Sample> a(fast.samples().begin(), fast.samples().end());
  const std::vector<Sample> b(slow.samples().begin(), slow.samples().end());
  EXPECT_EQ(a, b);
  EXPECT_GT(fast.stacks().size(), 100u);  // the stacks did change
}

TEST(StackTable, ThreadGivenStacksMatchPlainOnes) {
  const auto pool = frame_pool();
  Profile p;
  const model::ThreadInfo thread{1, 2, 3, "T"};
  // Before the thread is known, and before it has a sample: the plain lookup.
  const std::vector<Frame> ab{pool[1], pool[0]}, b{pool[0]}, cb{pool[2], pool[0]};
  const auto s_ab = p.add_stack(ab, thread);
  const auto t = p.add_thread(thread);
  EXPECT_EQ(p.add_stack(ab, thread), s_ab);
  p.add_sample(t, s_ab, 0);
  EXPECT_EQ(p.add_stack(ab, thread), s_ab);
  const auto s_b = p.add_stack(b, thread);
  EXPECT_EQ(p.stacks()[s_b], (Profile::Stack{1}));  // ab numbered its frames innermost first
  const auto s_cb = p.add_stack(cb, thread);
  EXPECT_EQ(p.stacks()[s_cb], (Profile::Stack{2, 1}));
  EXPECT_EQ(p.add_stack(cb), s_cb);
  EXPECT_EQ(p.add_stack(b), s_b);
  EXPECT_EQ(p.stacks().size(), 3u);
}

}  // namespace
}  // namespace dapprof::formats
