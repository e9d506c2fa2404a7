#include "sampler/python/gc_state.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace dapprof::sampler::python {
namespace {

TEST(GcState, TheFlagIsTheRuntimesUntil38AndEachInterpretersAfter) {
  const Address runtime = 0x1000, interp = 0x8000;
  for (int minor = 7; minor <= 15; ++minor) {
    const auto layout = layout_for(3, minor);
    ASSERT_TRUE(layout) << layout.message();
    const auto at = gc_flag_address(*layout, runtime, interp);
    ASSERT_TRUE(at) << "3." << minor;
    if (minor <= 8)
      EXPECT_EQ(*at, runtime + layout->runtime_gc_collecting) << "3." << minor;
    else
      EXPECT_EQ(*at, interp + layout->interp_gc_collecting) << "3." << minor;
  }
  EXPECT_FALSE(gc_flag_address(Layout{}, runtime, interp));
}

TEST(GcState, OnlyTheGilHolderRunsTheCollection) {
  EXPECT_TRUE(runs_collection(1, 0x10, 0x10));
  EXPECT_FALSE(runs_collection(0, 0x10, 0x10));  // not collecting
  EXPECT_FALSE(runs_collection(1, 0x20, 0x10));  // another thread holds the GIL
  EXPECT_FALSE(runs_collection(1, 0, 0x10));     // nobody does
}

model::ThreadStack stack(std::uint64_t id, bool gil, bool waiting_task = false) {
  model::ThreadStack t;
  t.info.thread_id = id;
  t.owns_gil = gil;
  t.waiting_task = waiting_task;
  for (const char* function : {"work", "<module>"}) {
    model::Frame f;
    f.function = function;
    f.file = "app.py";
    t.frames.push_back(f);
  }
  return t;
}

TEST(GcState, TheCollectorsFrameGoesOnTopOfTheCollectingThreadOnly) {
  model::Snapshot snap;
  snap.threads = {stack(1, false), stack(2, true), stack(2, false, true)};
  const std::vector<std::uint64_t> collecting{2};
  add_gc_frames(snap, collecting);
  EXPECT_EQ(snap.threads[0].frames.size(), 2u);
  ASSERT_EQ(snap.threads[1].frames.size(), 3u);
  EXPECT_TRUE(snap.threads[1].frames[0].gc());
  EXPECT_EQ(snap.threads[1].frames[0].function, "(garbage collection)");
  EXPECT_EQ(model::frame_place(snap.threads[1].frames[0]), "<GC>");
  EXPECT_EQ(snap.threads[1].frames[1].function, "work");
  // A waiting task's stack sampled on the thread's behalf is not the thread's own.
  EXPECT_EQ(snap.threads[2].frames.size(), 2u);
}

}  // namespace
}  // namespace dapprof::sampler::python
