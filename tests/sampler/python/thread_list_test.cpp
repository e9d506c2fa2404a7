// The thread list as StackWalker::threads reads it, on a made-up address space
// (support/address_space.hpp): each thread's top frame, a list made circular by a torn read, and
// sleepers whose top frame the caller does not need (on 3.11-3.12 that frame is read through a
// pointer into the thread's own C stack: here such a pointer leads nowhere mapped, so reading it
// would fail the walk); and the list kept between samples (ThreadListMemo), read again only where
// it may have changed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <vector>

#include "sampler/process/memory.hpp"
#include "sampler/python/code_cache.hpp"
#include "sampler/python/layout.hpp"
#include "sampler/python/objects.hpp"
#include "sampler/python/stack_walk.hpp"
#include "sampler/python/thread_list_memo.hpp"
#include "support/address_space.hpp"
#include "support/layout_fixture.hpp"

namespace dapprof::sampler::python {
namespace {

using fake::put;
using process::ProcessMemory;

constexpr Address kInterp = 0x1000;
constexpr Address kFirstThread = 0x100000;
constexpr Address kThreadStride = 0x1000;
constexpr Address kFirstCframe = 0x800000;  // one "C stack" per thread, kThreadStride apart
constexpr Address kFirstFrame = 0x2000000;

class FakeThreads {
 public:
  FakeThreads(const Layout& l, int count) : l_(l), tstates_(count), cframes_(count) {
    for (int i = 0; i < count; ++i) {
      auto& t = tstates_[i];
      t.resize(l.tstate_size);
      put(t, l.tstate_next, i + 1 < count ? thread(i + 1) : Address{0});
      put(t, l.tstate_interp, kInterp);
      put(t, l.tstate_thread_id, std::uint64_t(7000 + i));
      put(t, l.tstate_native_thread_id, std::uint64_t(100 + i));
      put(t, l.tstate_current_frame, frame(i));
      put(t, l.tstate_frame, frame(i));
      put(t, l.tstate_cframe, cframe(i));
      space_.map(thread(i), t);
      cframes_[i].resize(l.cframe_current_frame == kAbsent ? 8 : l.cframe_current_frame + 8);
      put(cframes_[i], l.cframe_current_frame, frame(i));
    }
  }
  static Address thread(int i) { return kFirstThread + kThreadStride * i; }
  static Address cframe(int i) { return kFirstCframe + kThreadStride * i; }
  static Address frame(int i) { return kFirstFrame + kThreadStride * i; }

  // Maps thread i's C stack (the cframe its thread state points to).
  void map_cframe(int i) { space_.map(cframe(i), cframes_[i]); }
  // Makes the last thread's successor thread `i`: a list that loops.
  void loop_back_to(int i) { put(tstates_.back(), l_.tstate_next, thread(i)); }

  // Sets a word of thread i's state.
  void set(int i, std::uint64_t offset, Address value) { put(tstates_[i], offset, value); }

  Result<std::vector<RawThread>> read(const std::function<bool(const RawThread&)>& skip = {}) {
    ProcessMemory memory(1, space_);
    const Objects objects(memory, l_, TypeAddresses{});
    CodeCache codes(objects);
    const StackWalker walker(objects, codes, /*nonblocking=*/true);
    return walker.threads(kInterp, thread(0), skip);
  }
  Result<std::vector<RawThread>> read(ThreadListMemo& memo, int head,
                                      ThreadListMemo::Clock::time_point now,
                                      const std::function<bool(const RawThread&)>& asleep) {
    ProcessMemory memory(1, space_);
    const Objects objects(memory, l_, TypeAddresses{});
    CodeCache codes(objects);
    const StackWalker walker(objects, codes, /*nonblocking=*/true);
    return memo.threads(walker, kInterp, thread(head), now, asleep);
  }

 private:
  const Layout& l_;
  std::vector<std::vector<std::byte>> tstates_, cframes_;
  fake::AddressSpace space_;
};

class ThreadList : public fake::LayoutTest {
 protected:
  bool through_cframe() const { return layout_.tstate_cframe != kAbsent; }
};

TEST_P(ThreadList, EveryThreadWithItsTopFrame) {
  FakeThreads fake(layout_, 5);
  for (int i = 0; i < 5; ++i) fake.map_cframe(i);
  auto threads = fake.read();
  ASSERT_TRUE(threads) << threads.message();
  ASSERT_EQ(threads->size(), 5u);
  for (int i = 0; i < 5; ++i) {
    const RawThread& t = (*threads)[i];
    EXPECT_EQ(t.tstate, FakeThreads::thread(i));
    EXPECT_EQ(t.thread_id, 7000u + i);
    EXPECT_EQ(t.top_frame, FakeThreads::frame(i));
    EXPECT_TRUE(t.top_read);
  }
}

TEST_P(ThreadList, AListThatLoopsIsATornRead) {
  for (int back_to : {0, 2, 6}) {
    FakeThreads fake(layout_, 7);
    for (int i = 0; i < 7; ++i) fake.map_cframe(i);
    fake.loop_back_to(back_to);
    auto threads = fake.read();
    ASSERT_FALSE(threads) << "looping back to thread " << back_to;
    EXPECT_EQ(threads.code(), ErrorCode::TornRead);
  }
}

TEST_P(ThreadList, ASleeperTheCallerNeedsNotHasItsStackLeftUnread) {
  if (!through_cframe()) GTEST_SKIP() << "the top frame is in the thread state itself";
  FakeThreads fake(layout_, 4);
  fake.map_cframe(1);  // the others' C stacks are not there: reading one fails the walk
  auto threads = fake.read([](const RawThread& t) { return t.thread_id != 7001; });
  ASSERT_TRUE(threads) << threads.message();
  ASSERT_EQ(threads->size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ((*threads)[i].top_read, i == 1) << i;
    EXPECT_EQ((*threads)[i].top_frame, i == 1 ? FakeThreads::frame(1) : Address{0}) << i;
  }
  // Without the caller's word, the missing stacks are a failed read.
  EXPECT_FALSE(fake.read());
}

// Threads 7000 + i; all but `awake` asleep.
std::function<bool(const RawThread&)> asleep_but(std::uint64_t awake) {
  return [awake](const RawThread& t) { return t.thread_id != awake; };
}

TEST_P(ThreadList, AKeptListReadsOnlyTheThreadsAwake) {
  FakeThreads fake(layout_, 4);
  for (int i = 0; i < 4; ++i) fake.map_cframe(i);
  ThreadListMemo memo;
  const auto t0 = ThreadListMemo::Clock::now();
  ASSERT_TRUE(fake.read(memo, 0, t0, asleep_but(7001)));
  // A sleeper's state made unreadable (another interpreter's): read again, it would fail.
  fake.set(2, layout_.tstate_interp, kInterp + 8);
  auto threads = fake.read(memo, 0, t0 + std::chrono::milliseconds(1), asleep_but(7001));
  ASSERT_TRUE(threads) << threads.message();
  ASSERT_EQ(threads->size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ((*threads)[i].tstate, FakeThreads::thread(i));
    EXPECT_EQ((*threads)[i].top_read, i == 1) << i;
    EXPECT_EQ((*threads)[i].top_frame, i == 1 ? FakeThreads::frame(1) : Address{0}) << i;
  }
  // Once the list is as old as a sleeper's recheck, it is read whole again.
  EXPECT_FALSE(fake.read(memo, 0, t0 + ThreadListMemo::kMaxAge, asleep_but(7001)));
}

TEST_P(ThreadList, AKeptListSeesANewThreadAndOneThatEnded) {
  FakeThreads fake(layout_, 5);
  for (int i = 0; i < 5; ++i) fake.map_cframe(i);
  ThreadListMemo memo;
  const auto t0 = ThreadListMemo::Clock::now();
  auto threads = fake.read(memo, 1, t0, asleep_but(7001));  // threads 1-4
  ASSERT_TRUE(threads);
  EXPECT_EQ(threads->size(), 4u);
  // A new thread goes to the head of the list.
  threads = fake.read(memo, 0, t0 + std::chrono::milliseconds(1), asleep_but(7001));
  ASSERT_TRUE(threads);
  EXPECT_EQ(threads->size(), 5u);
  // Thread 2 ends: thread 1, awake and so read again, now links to thread 3.
  fake.set(1, layout_.tstate_next, FakeThreads::thread(3));
  threads = fake.read(memo, 0, t0 + std::chrono::milliseconds(2), asleep_but(7001));
  ASSERT_TRUE(threads) << threads.message();
  ASSERT_EQ(threads->size(), 4u);
  for (const auto& t : *threads) EXPECT_NE(t.tstate, FakeThreads::thread(2));
}

INSTANTIATE_TEST_SUITE_P(Versions, ThreadList, ::testing::Values(8, 10, 11, 12, 13, 14),
                         [](const auto& version) { return "3_" + std::to_string(version.param); });

}  // namespace
}  // namespace dapprof::sampler::python
