// The `stacks` encoding of profilingData: each distinct stack announced once, samples as runs of
// (thread, stack ID) with counts; merged and dropped batches keep that, and the decoder checks it.
#include <gtest/gtest.h>

#include <vector>

#include "protocol/batch.hpp"
#include "protocol/stream_decoder.hpp"

namespace dapprof::protocol {
namespace {

model::ThreadStack on(std::uint64_t tid, std::vector<model::Frame> innermost_first) {
  model::ThreadStack t;
  t.info = {7, 0, tid, "t" + std::to_string(tid)};
  t.frames = std::move(innermost_first);
  return t;
}

const model::Frame kMain{"main", "/app/main.py", 3, model::FrameKind::Python, ""};
const model::Frame kWork{"work", "/app/main.py", 9, model::FrameKind::Python, ""};

// Expands a decoded body into one (thread, innermost function) per sample.
std::vector<std::pair<std::uint64_t, std::string>> flat(const std::vector<DecodedSample>& in) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  for (const auto& s : in)
    out.insert(out.end(), s.count, {s.thread->os_thread_id, s.stack.back().function});
  return out;
}

TEST(StacksEncoding, RepeatedStacksAreRunsAndEachStackIsAnnouncedOnce) {
  BatchBuilder stacks(Encoding::Stacks), frames;
  const std::vector<model::ThreadStack> sampled = {on(1, {kWork, kMain}), on(1, {kWork, kMain}),
                                                   on(1, {kWork, kMain}), on(2, {kWork, kMain}),
                                                   on(1, {kMain}),        on(1, {kWork, kMain})};
  for (const auto& t : sampled) {
    ASSERT_TRUE(stacks.add(t).ok());
    ASSERT_TRUE(frames.add(t).ok());
  }
  const Json body = to_json(stacks.take(100));
  const auto main_id = body["newStacks"]["1"][0];
  EXPECT_EQ(body["newStacks"].size(), 2u);
  EXPECT_EQ(body["newStacks"]["1"], Json::array({main_id}));
  EXPECT_EQ(body["newStacks"]["0"].size(), 2u);
  EXPECT_EQ(body["samples"], Json::array());
  EXPECT_EQ(body["stackIds"], Json::parse("[0, 0, 1, 0]"));
  EXPECT_EQ(body["stackCounts"], Json::parse("[3, 1, 1, 1]"));
  EXPECT_EQ(body["threadIds"], Json::parse("[1, 2, 1, 1]"));
  EXPECT_EQ(body["sampleCount"], 6);

  StreamDecoder compact, full;
  auto a = compact.decode(body);
  auto b = full.decode(to_json(frames.take(100)));
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(flat(*a), flat(*b));
  EXPECT_EQ(compact.sample_count(), 6u);
  EXPECT_EQ(compact.stack_count(), 2u);

  // Known stacks are used by ID alone.
  ASSERT_TRUE(stacks.add(on(2, {kMain})).ok());
  const Json next = to_json(stacks.take(100));
  EXPECT_TRUE(next["newStacks"].empty());
  EXPECT_TRUE(next["newFrames"].empty());
  EXPECT_EQ(next["stackIds"], Json::parse("[1]"));
  ASSERT_TRUE(compact.decode(next).ok());
}

TEST(StacksEncoding, AStoreIndexGivesTheSameIdsAsTheStack) {
  // As a run's recording adds them: frames and stacks already interned by its profile.
  const std::vector<model::Frame> store = {kWork, kMain};
  const std::vector<std::vector<std::uint32_t>> store_stacks = {{0, 1}, {1}};
  BatchBuilder by_index(Encoding::Stacks), by_stack(Encoding::Stacks);
  for (const std::uint32_t s : {0u, 0u, 1u, 0u, 1u}) {
    const auto t = on(1, s == 0 ? std::vector{kWork, kMain} : std::vector{kMain});
    ASSERT_TRUE(by_index.add(t.info, store_stacks[s], store, s).ok());
    ASSERT_TRUE(by_stack.add(t).ok());
  }
  EXPECT_EQ(to_json(by_index.take(10)), to_json(by_stack.take(10)));
}

TEST(StacksEncoding, MergingJoinsARunAcrossBatchesAndDroppingKeepsTheStacks) {
  BatchBuilder builder(Encoding::Stacks);
  ASSERT_TRUE(builder.add(on(1, {kMain})).ok());
  auto first = builder.take(10);
  ASSERT_TRUE(builder.add(on(1, {kMain})).ok());
  ASSERT_TRUE(builder.add(on(1, {kWork, kMain})).ok());
  auto merged = merge(std::move(first), builder.take(10));
  EXPECT_EQ(merged.runs, (std::vector<StackRun>{{1, 0, 2}, {1, 1, 1}}));
  EXPECT_EQ(merged.sample_count(), 3u);

  drop_samples(merged);
  const Json body = to_json(merged);
  EXPECT_EQ(body["sampleCount"], 0);
  EXPECT_EQ(body["droppedSampleCount"], 3);
  EXPECT_EQ(body["newStacks"].size(), 2u);  // later events use them
  StreamDecoder decoder;
  ASSERT_TRUE(decoder.decode(body).ok());
  ASSERT_TRUE(builder.add(on(1, {kWork, kMain})).ok());
  auto later = decoder.decode(to_json(builder.take(10)));
  ASSERT_TRUE(later.ok()) << later.message();
  EXPECT_EQ(flat(*later), (std::vector<std::pair<std::uint64_t, std::string>>{{1, "work"}}));
}

TEST(StacksEncoding, TheDecoderRejectsBrokenRunsWithoutChangingState) {
  const Json frame = {{"file", "/a.py"}, {"line", 1}, {"function", "f"}};
  const Json thread = {{"name", "t"}, {"osThreadId", 3}};
  const Json base = {{"newFrames", {{"5", frame}}},
                     {"newStacks", {{"0", {5}}}},
                     {"samples", Json::array()},
                     {"stackIds", {0}},
                     {"stackCounts", {4}},
                     {"threadIds", {3}},
                     {"threads", {{"3", thread}}},
                     {"sampleCount", 4},
                     {"duration", 1}};
  auto rejects = [&](const char* pointer, Json value, std::string_view mention) {
    Json body = base;
    body[Json::json_pointer(pointer)] = std::move(value);
    StreamDecoder decoder;
    auto result = decoder.decode(body);
    ASSERT_FALSE(result.ok()) << pointer;
    EXPECT_NE(result.message().find(mention), std::string::npos) << result.message();
    EXPECT_EQ(decoder.stack_count(), 0u);
  };
  StreamDecoder decoder;
  auto ok = decoder.decode(base);
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(ok->size(), 1u);
  EXPECT_EQ(ok->at(0).count, 4u);
  EXPECT_EQ(decoder.sample_count(), 4u);
  auto again = decoder.decode(base);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.message().find("defined twice"), std::string::npos) << again.message();

  rejects("/stackIds/0", 1, "stackIds[0] is 1");
  rejects("/stackCounts", Json::array(), "'stackCounts'");
  rejects("/stackCounts/0", 0, "stackCounts[0]");
  rejects("/sampleCount", 3, "'sampleCount'");
  rejects("/samples", {{5}}, "'samples' must be empty");
  rejects("/newStacks/0/0", 6, "newStacks[\"0\"]");
  rejects("/newStacks/x", {5}, "stack ID 'x'");
  rejects("/threadIds", {3, 3}, "'threadIds'");
}

}  // namespace
}  // namespace dapprof::protocol
