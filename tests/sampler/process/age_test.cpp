// process_age against real processes: one started now, one started earlier, one gone.
#include "sampler/process/age.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "child.hpp"

namespace dapprof::sampler::process {
namespace {

using namespace std::chrono_literals;

TEST(ProcessAge, GrowsFromTheProcessStart) {
  test::Child child({"/bin/sleep", "30"});
  const auto young = process_age(child.pid());
  ASSERT_TRUE(young.has_value());
  EXPECT_LT(*young, 2s);
  std::this_thread::sleep_for(300ms);
  const auto older = process_age(child.pid());
  ASSERT_TRUE(older.has_value());
  // Clock ticks are 10 ms: the difference is the sleep, give or take two of them.
  EXPECT_GE(*older - *young, 250ms);
  EXPECT_LE(*older - *young, 2s);
  // This test process started before the child did.
  const auto self = process_age(::getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_GE(*self, *older);
}

TEST(ProcessAge, NoneForAProcessThatIsGone) {
  pid_t pid = 0;
  {
    test::Child child({"/bin/true"});
    pid = child.pid();
    child.wait();
  }
  EXPECT_FALSE(process_age(pid).has_value());
}

}  // namespace
}  // namespace dapprof::sampler::process
