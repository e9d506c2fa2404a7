// Frame IDs: stable, below 2^53, announced once per run, collisions resolved deterministically.
#include "protocol/frame_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "protocol/batch.hpp"
#include "protocol/stream_decoder.hpp"
#include "random_stacks.hpp"

namespace dapprof::protocol {
namespace {

constexpr std::uint64_t kMaxSafeInteger = (std::uint64_t{1} << 53) - 1;

model::Frame py(std::string file, int line, std::string function) {
  model::Frame f;
  f.file = std::move(file);
  f.line = line;
  f.function = std::move(function);
  return f;
}

FrameId id_of(FrameTable& table, const model::Frame& frame) {
  auto interned = table.intern(frame);
  EXPECT_TRUE(interned.ok());
  return interned.ok() ? interned->id : ~FrameId{0};
}

TEST(FrameKey, IsTheDocumentedByteString) {
  using namespace std::string_literals;
  EXPECT_EQ(frame_key(py("/app/main.py", 10, "main")),
            "/app/main.py\0"
            "10\0main"s);
  model::Frame native = py("", 0, "PyEval_EvalFrameDefault");
  native.kind = model::FrameKind::Native;
  native.module = "libpython3.12.so.1.0";
  EXPECT_EQ(frame_key(native),
            "\0"
            "0\0PyEval_EvalFrameDefault\0native\0libpython3.12.so.1.0"s);
}

TEST(FrameKey, OfATaskFrameEndsWithItsState) {
  using namespace std::string_literals;
  EXPECT_EQ(frame_key(model::task_frame("handler-0", model::TaskState::Waiting)),
            "\0"
            "0\0handler-0\0task\0waiting"s);
  FrameTable table;
  const auto running = id_of(table, model::task_frame("handler-0", model::TaskState::Running));
  const auto waiting = id_of(table, model::task_frame("handler-0", model::TaskState::Waiting));
  // A task's running and waiting frames are two frames, and neither is the plain frame of its
  // name.
  EXPECT_NE(running, waiting);
  EXPECT_NE(running, id_of(table, py("", 0, "handler-0")));
}

// Golden values, computed once with XXH3-64 (seed 0) masked to 53 bits and checked in on purpose:
// the protocol promises that a frame keeps its ID across runs, sessions and dapprof versions, so a
// change here is a protocol break, not a test to update.
TEST(FrameTable, IdsAreStableAcrossRunsAndVersions) {
  FrameTable table;
  EXPECT_EQ(id_of(table, py("/app/main.py", 10, "main")), 8504641672448434u);
  model::Frame native = py("", 0, "PyEval_EvalFrameDefault");
  native.kind = model::FrameKind::Native;
  native.module = "libpython3.12.so.1.0";
  EXPECT_EQ(id_of(table, native), 8045337731731065u);
  EXPECT_EQ(table.collisions(), 0u);
}

TEST(FrameTable, SameFrameSameIdAndNewOnlyOnce) {
  FrameTable table;
  auto first = table.intern(py("/a.py", 1, "f"));
  auto second = table.intern(py("/a.py", 1, "f"));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_TRUE(first->is_new);
  EXPECT_FALSE(second->is_new);
  EXPECT_EQ(first->id, second->id);
  // Each field is part of the identity.
  std::set<FrameId> ids{first->id, id_of(table, py("/a.py", 2, "f")),
                        id_of(table, py("/b.py", 1, "f")), id_of(table, py("/a.py", 1, "g"))};
  model::Frame native = py("/a.py", 1, "f");
  native.kind = model::FrameKind::Native;
  ids.insert(id_of(table, native));
  native.module = "libc.so.6";
  ids.insert(id_of(table, native));
  EXPECT_EQ(ids.size(), 6u);
  table.clear();
  auto again = table.intern(py("/a.py", 1, "f"));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->is_new);  // a new run announces frames again, with the same ID
  EXPECT_EQ(again->id, first->id);
}

TEST(FrameTable, ManyRandomFramesStayBelow2Pow53AndMatchAFreshTable) {
  testing::RandomStacks random(7, 5000, 1);
  FrameTable a, b;
  for (int i = 0; i < 20000; ++i) {
    const auto stack = random.next(1);
    const FrameId id = id_of(a, stack.frames[0]);
    EXPECT_LE(id, kMaxSafeInteger);
    EXPECT_EQ(id, id_of(b, stack.frames[0]));
  }
}

// A hash that ignores the key: every frame collides with every other one.
std::uint64_t seed_only(std::string_view, std::uint64_t seed) { return seed * 1000; }

TEST(FrameTable, ForcedCollisionsGetDistinctDeterministicIds) {
  FrameTable table(kFrameIdBits, seed_only);
  std::vector<FrameId> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(id_of(table, py("/c.py", i, "f")));
  // Frame i takes the first seed whose ID is free: seed i.
  EXPECT_EQ(ids, (std::vector<FrameId>{0, 1000, 2000, 3000, 4000}));
  EXPECT_EQ(table.collisions(), 0u + 1 + 2 + 3 + 4);
  // Already interned frames keep their IDs.
  EXPECT_EQ(id_of(table, py("/c.py", 3, "f")), 3000u);
}

TEST(FrameTable, ConstantHashFallsBackToProbingAndStillTerminates) {
  FrameTable table(kFrameIdBits, [](std::string_view, std::uint64_t) { return 42u; });
  std::set<FrameId> ids;
  for (int i = 0; i < 100; ++i) ids.insert(id_of(table, py("/c.py", i, "f")));
  EXPECT_EQ(ids.size(), 100u);
}

TEST(FrameTable, SmallIdSpaceResolvesCollisionsIdenticallyInTwoRuns) {
  // 3 bits: 8 IDs, so real XXH3 values collide almost at once.
  auto run = [] {
    FrameTable table(3);
    std::vector<FrameId> ids;
    for (int i = 0; i < 8; ++i) ids.push_back(id_of(table, py("/s.py", i, "f")));
    EXPECT_GT(table.collisions(), 0u);
    auto full = table.intern(py("/s.py", 99, "f"));
    EXPECT_FALSE(full.ok());  // every ID is taken
    return ids;
  };
  const auto first = run();
  EXPECT_EQ(std::set<FrameId>(first.begin(), first.end()).size(), 8u);
  EXPECT_EQ(run(), first);
}

TEST(FrameTable, CollidingIdsRoundTripThroughBatches) {
  // 10 bits (1024 IDs) for 300 frames: collisions on most inserts; the decoder must still see exact
  // stacks.
  BatchBuilder builder(FrameTable(10));
  testing::RandomStacks random(11, 300, 3);
  std::vector<std::vector<model::Frame>> expected;
  StreamDecoder decoder;
  std::vector<std::vector<model::Frame>> decoded;
  for (int batch = 0; batch < 20; ++batch) {
    for (int i = 0; i < 20; ++i) {
      const auto thread = random.next(30);
      ASSERT_TRUE(builder.add(thread).ok());
      auto& root_first = expected.emplace_back();
      for (auto it = thread.frames.rbegin(); it != thread.frames.rend(); ++it)
        root_first.push_back(model::classified(*it));  // the origin travels with the frame
    }
    auto samples = decoder.decode(to_json(builder.take(100)));
    ASSERT_TRUE(samples.ok()) << samples.message();
    for (auto& s : *samples) decoded.push_back(std::move(s.stack));
  }
  EXPECT_GT(builder.frame_table().collisions(), 0u);
  EXPECT_EQ(decoded, expected);
}

}  // namespace
}  // namespace dapprof::protocol

namespace dapprof::protocol {
namespace {

TEST(FrameTable, FramesInternedByTheCallersIndexGetTheSameIds) {
  // A run's recording interns each frame once and hands the batches indices: the IDs must be the
  // ones the frames themselves would get, or a client could not match runs and versions.
  testing::RandomStacks random(99);
  FrameTable by_frame(10), by_index(10);  // few bits: collisions resolved identically too
  std::vector<model::Frame> store;
  for (int i = 0; i < 200; ++i) {
    for (const auto& frame : random.next(20).frames) {
      auto index = std::find(store.begin(), store.end(), frame) - store.begin();
      if (index == static_cast<std::ptrdiff_t>(store.size())) store.push_back(frame);
      auto a = by_frame.intern(frame);
      auto b = by_index.intern(static_cast<std::uint32_t>(index), frame);
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(a->id, b->id);
      EXPECT_EQ(a->is_new, b->is_new);
    }
  }
  EXPECT_EQ(by_frame.size(), by_index.size());
  EXPECT_GT(by_index.collisions(), 0u);
}

}  // namespace
}  // namespace dapprof::protocol
