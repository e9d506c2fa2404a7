// What each sampling mode keeps of a thread, as the sampler decides it (sampler/loop): the
// threads of the modes' tests against real programs (tests/app/cli/test_record_modes.py), here
// as the states the sampler reads.
#include "sampler/loop/sampling_mode.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dapprof::sampler::loop {
namespace {

using model::SamplingMode;

struct Thread {
  std::string name;
  bool on_cpu, active, owns_gil;
  std::string exception;
};

// A pure-Python burner, a hasher without the GIL, a sleeper, a handler asleep in an except
// block, and a thread the kernel shows runnable in threading's Event.wait.
const std::vector<Thread> kThreads = {
    {"burner", true, true, true, ""},     {"hasher", true, true, false, ""},
    {"sleeper", false, false, false, ""}, {"handler", false, false, false, "ValueError"},
    {"waiter", true, false, false, ""},
};

std::vector<std::string> kept(SamplingMode mode) {
  std::vector<std::string> names;
  for (const auto& t : kThreads) {
    model::ThreadStack stack;
    stack.on_cpu = t.on_cpu;
    stack.active = t.active;
    stack.owns_gil = t.owns_gil;
    stack.exception = t.exception;
    stack.frames = {model::Frame{"work", "/app/main.py", 3, model::FrameKind::Python, ""}};
    if (!select(mode, stack)) continue;
    names.push_back(t.name);
    if (mode == SamplingMode::Exception) {
      // The exception's frame on top (innermost first), the thread's own frames beneath.
      EXPECT_EQ(stack.frames.size(), 2u);
      EXPECT_EQ(stack.frames.front(), model::exception_frame(t.exception));
      EXPECT_TRUE(stack.frames.front().exception());
      EXPECT_EQ(stack.frames.front().function, "(exception) ValueError");
    } else {
      EXPECT_EQ(stack.frames.size(), 1u);
    }
  }
  return names;
}

TEST(SamplingMode, EachModeKeepsTheThreadsItNames) {
  using V = std::vector<std::string>;
  EXPECT_EQ(kept(SamplingMode::Active), (V{"burner", "hasher"}));
  EXPECT_EQ(kept(SamplingMode::Wall), (V{"burner", "hasher", "sleeper", "handler", "waiter"}));
  EXPECT_EQ(kept(SamplingMode::Cpu), (V{"burner", "hasher", "waiter"}));
  EXPECT_EQ(kept(SamplingMode::Gil), (V{"burner"}));
  EXPECT_EQ(kept(SamplingMode::Exception), (V{"handler"}));
}

TEST(SamplingMode, SleepingThreadsAreReadOnlyWhereAModeMayKeepThem) {
  EXPECT_FALSE(reads_sleeping_threads(SamplingMode::Active));
  EXPECT_FALSE(reads_sleeping_threads(SamplingMode::Cpu));
  EXPECT_TRUE(reads_sleeping_threads(SamplingMode::Wall));
  EXPECT_TRUE(reads_sleeping_threads(SamplingMode::Gil));
  EXPECT_TRUE(reads_sleeping_threads(SamplingMode::Exception));
  EXPECT_TRUE(reads_exceptions(SamplingMode::Exception));
  EXPECT_FALSE(reads_exceptions(SamplingMode::Wall));
}

}  // namespace
}  // namespace dapprof::sampler::loop
