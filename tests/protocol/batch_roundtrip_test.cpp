// BatchBuilder -> to_json -> DAP frames -> FrameDecoder -> StreamDecoder gives back exactly the
// stacks and threads that were sampled, in order, also when batches are merged or dropped, with
// either encoding of the samples.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <variant>

#include "protocol/backlog.hpp"
#include "protocol/batch.hpp"
#include "protocol/envelope.hpp"
#include "protocol/framing.hpp"
#include "protocol/messages.hpp"
#include "protocol/stream_decoder.hpp"
#include "random_stacks.hpp"

namespace dapprof::protocol {
namespace {

struct Expected {
  std::vector<model::Frame> stack;  // root first
  model::ThreadInfo thread;
  bool operator==(const Expected&) const = default;
};

// Readable failure output instead of gtest's byte dump.
void PrintTo(const Expected& e, std::ostream* os) {
  *os << "thread " << e.thread.os_thread_id << " '" << e.thread.name << "' pid " << e.thread.pid
      << ": ";
  for (const auto& f : e.stack) *os << f.function << "@" << f.file << ":" << f.line << " ";
}

// What the client decodes: the stack root first, each frame with the origin the daemon gave it.
Expected expect(const model::ThreadStack& t) {
  Expected e{{}, t.info};
  for (auto it = t.frames.rbegin(); it != t.frames.rend(); ++it)
    e.stack.push_back(model::classified(*it));
  return e;
}

// Sends bodies as profilingData events over the DAP codec, cut into random fragments, and decodes
// them as a client would.
struct Client {
  StreamDecoder decoder;
  std::vector<Expected> received;
  std::set<std::string> announced;  // every newFrames key ever received
  std::size_t events = 0;
  std::size_t stack_events = 0;  // events whose samples came as stackIds

  void receive(const std::vector<ProfilingBatch>& batches, std::mt19937_64& rng) {
    std::string wire;
    for (const auto& batch : batches)
      wire += encode_frame(make_event(kProfilingData, to_json(batch)));
    FrameDecoder frames;
    std::size_t pos = 0;
    while (pos < wire.size()) {
      const std::size_t n = std::min<std::size_t>(wire.size() - pos, 1 + rng() % 3000);
      frames.feed(std::string_view(wire).substr(pos, n));
      pos += n;
      for (;;) {
        auto step = frames.next();
        if (std::holds_alternative<NeedMore>(step)) break;
        ASSERT_TRUE(std::holds_alternative<Json>(step)) << std::get<FramingError>(step).message;
        const Json& message = std::get<Json>(step);
        ASSERT_EQ(message["event"], "profilingData");
        for (const auto& [key, value] : message["body"]["newFrames"].items())
          EXPECT_TRUE(announced.insert(key).second) << "frame " << key << " announced twice";
        if (message["body"].contains("stackIds")) ++stack_events;
        auto samples = decoder.decode(message["body"]);
        ASSERT_TRUE(samples.ok()) << samples.message();
        ++events;
        for (auto& s : *samples) {
          ASSERT_TRUE(s.thread.has_value());
          ASSERT_GE(s.count, 1u);
          received.insert(received.end(), s.count, {std::move(s.stack), *s.thread});
        }
      }
    }
    EXPECT_EQ(frames.buffered(), 0u);
  }
};

class RoundTrip : public ::testing::TestWithParam<Encoding> {};
std::string encoding_name(const ::testing::TestParamInfo<Encoding>& param) {
  return param.param == Encoding::Frames ? "Frames" : "Stacks";
}
INSTANTIATE_TEST_SUITE_P(Encodings, RoundTrip,
                         ::testing::Values(Encoding::Frames, Encoding::Stacks), encoding_name);

TEST_P(RoundTrip, RandomStacksComeBackExactlyInOrder) {
  testing::RandomStacks random(1);
  std::mt19937_64 rng(2);
  BatchBuilder builder(GetParam());
  std::vector<Expected> expected;
  std::vector<ProfilingBatch> batches;
  for (int b = 0; b < 40; ++b) {
    const int n = static_cast<int>(rng() % 30);  // empty batches too
    for (int i = 0; i < n; ++i) {
      const auto thread = random.next();
      ASSERT_TRUE(builder.add(thread).ok());
      expected.push_back(expect(thread));
    }
    batches.push_back(builder.take(100.0 + b));
  }
  Client client;
  client.receive(batches, rng);
  EXPECT_EQ(client.received, expected);
  EXPECT_EQ(client.decoder.sample_count(), expected.size());
  EXPECT_EQ(client.decoder.dropped_sample_count(), 0u);
  EXPECT_EQ(client.decoder.frame_count(), builder.frame_table().size());
  EXPECT_DOUBLE_EQ(client.decoder.duration_ms(), 40 * 100.0 + 39 * 40 / 2);
  EXPECT_EQ(client.stack_events, GetParam() == Encoding::Stacks ? client.events : 0u);
}

TEST_P(RoundTrip, MergedAndDroppedBatchesKeepOrderFramesAndCountDrops) {
  testing::RandomStacks random(3);
  std::mt19937_64 rng(4);
  BatchBuilder builder(GetParam());
  std::vector<Expected> expected;
  std::vector<ProfilingBatch> sent;
  std::uint64_t dropped = 0, total = 0;
  std::optional<ProfilingBatch> backlog;  // what a slow client has not read yet
  for (int b = 0; b < 60; ++b) {
    std::vector<Expected> in_batch;
    const int n = 1 + static_cast<int>(rng() % 20);
    for (int i = 0; i < n; ++i) {
      const auto thread = random.next(120);
      ASSERT_TRUE(builder.add(thread).ok());
      in_batch.push_back(expect(thread));
    }
    builder.add_errors(b % 3);
    total += n;
    ProfilingBatch batch = builder.take(50);
    switch (rng() % 3) {
      case 0:  // the client is slow: this batch's samples are dropped, its definitions kept
        drop_samples(batch);
        dropped += n;
        break;
      default:
        expected.insert(expected.end(), in_batch.begin(), in_batch.end());
    }
    backlog = backlog ? merge(std::move(*backlog), std::move(batch)) : std::move(batch);
    if (rng() % 4 == 0) {  // the client caught up: send everything merged so far as one event
      sent.push_back(std::move(*backlog));
      backlog.reset();
    }
  }
  if (backlog) sent.push_back(std::move(*backlog));
  Client client;
  client.receive(sent, rng);
  EXPECT_EQ(client.events, sent.size());
  EXPECT_EQ(client.received, expected);
  EXPECT_EQ(client.decoder.dropped_sample_count(), dropped);
  EXPECT_EQ(client.decoder.sample_count() + dropped, total);
  EXPECT_EQ(client.decoder.error_count(), 60u);  // sum of b % 3 for b < 60
  EXPECT_DOUBLE_EQ(client.decoder.duration_ms(), 60 * 50.0);
  EXPECT_EQ(client.decoder.frame_count(), builder.frame_table().size());
}

TEST(Backlog, KeepsTheNewestSamplesAndEveryDefinition) {
  // Each sample's innermost frame names its sequence number, so the test can tell which arrived.
  testing::RandomStacks random(5);
  std::mt19937_64 rng(6);
  BatchBuilder builder;
  Backlog backlog(40);
  StreamDecoder decoder;
  int produced = 0;
  std::vector<int> pushed_since_take, received_all;
  for (int round = 0; round < 200; ++round) {
    const int n = static_cast<int>(rng() % 25);
    for (int i = 0; i < n; ++i) {
      auto thread = random.next(20);
      thread.frames.insert(thread.frames.begin(),
                           {"sample", "/seq.py", produced, model::FrameKind::Python, ""});
      ASSERT_TRUE(builder.add(thread).ok());
      pushed_since_take.push_back(produced++);
    }
    backlog.push(builder.take(10));
    if (rng() % 5 != 0) continue;  // the client is busy
    auto batch = backlog.take();
    ASSERT_TRUE(batch.has_value());
    EXPECT_TRUE(backlog.empty());
    auto samples = decoder.decode(to_json(*batch));
    ASSERT_TRUE(samples.ok()) << samples.message();
    std::vector<int> received;
    for (const auto& s : *samples) received.push_back(s.stack.back().line);
    // What arrives is the newest part of what was pushed, in order, within the bound or from a
    // single batch larger than it.
    ASSERT_LE(received.size(), pushed_since_take.size());
    EXPECT_TRUE(std::equal(received.rbegin(), received.rend(), pushed_since_take.rbegin()));
    EXPECT_EQ(batch->dropped_sample_count, pushed_since_take.size() - received.size());
    received_all.insert(received_all.end(), received.begin(), received.end());
    pushed_since_take.clear();
  }
  if (auto rest = backlog.take()) {
    ASSERT_TRUE(decoder.decode(to_json(*rest)).ok());
  }
  EXPECT_GT(backlog.dropped_total(), 0u);
  EXPECT_EQ(decoder.dropped_sample_count(), backlog.dropped_total());
  EXPECT_EQ(decoder.sample_count() + decoder.dropped_sample_count(),
            static_cast<std::uint64_t>(produced));
  EXPECT_EQ(decoder.frame_count(), builder.frame_table().size());
  EXPECT_TRUE(std::is_sorted(received_all.begin(), received_all.end()));
}

TEST(BatchBuilder, EventBodyMatchesTheDebugpyProposalShape) {
  BatchBuilder builder;
  model::ThreadStack thread;
  thread.info = {99, 140245385041728, 321, "MainThread"};
  thread.frames = {{"calc", "/app/utils.py", 42, model::FrameKind::Python, ""},
                   {"main", "/app/main.py", 10, model::FrameKind::Python, ""}};
  ASSERT_TRUE(builder.add(thread).ok());
  thread.frames.erase(thread.frames.begin());
  ASSERT_TRUE(builder.add(thread).ok());
  const Json body = to_json(builder.take(150.5));
  const std::string main_id = "8504641672448434";  // the golden ID of FrameTable's tests
  EXPECT_EQ(body["newFrames"][main_id],
            Json({{"file", "/app/main.py"}, {"line", 10}, {"function", "main"}}));
  const auto calc_id = body["samples"][0][1].get<std::uint64_t>();
  EXPECT_EQ(body["samples"], Json::parse("[[8504641672448434, " + std::to_string(calc_id) +
                                         "], [8504641672448434]]"));
  EXPECT_EQ(body["sampleCount"], 2);
  EXPECT_EQ(body["duration"], 150.5);
  EXPECT_EQ(body["threadIds"], Json::parse("[321, 321]"));
  EXPECT_EQ(body["threads"]["321"], Json({{"name", "MainThread"},
                                          {"osThreadId", 321},
                                          {"pid", 99},
                                          {"pythonThreadId", "140245385041728"}}));
  // Nothing is announced twice: a second batch with the same stack has no definitions.
  ASSERT_TRUE(builder.add(thread).ok());
  const Json next = to_json(builder.take(100));
  EXPECT_TRUE(next["newFrames"].empty());
  EXPECT_TRUE(next["threads"].empty());
  EXPECT_TRUE(builder.empty());
}

TEST(BatchBuilder, ProcessesAreAnnouncedOnceAndOnceMoreWhenTheyEnd) {
  BatchBuilder builder;
  model::Snapshot snap;
  snap.pid = 4243;
  snap.process = std::make_shared<model::ProcessInfo>(
      model::ProcessInfo{.pid = 4243, .command_line = "python3 pool.py"});
  ASSERT_TRUE(builder.add(snap).ok());
  ASSERT_TRUE(builder.add(snap).ok());
  const Json body = to_json(builder.take(10));
  EXPECT_EQ(body["processes"],
            Json::parse(R"({"4243": {"pid": 4243, "commandLine": "python3 pool.py"}})"));
  ASSERT_TRUE(builder.add(snap).ok());
  EXPECT_TRUE(builder.empty()) << "announced again";
  EXPECT_FALSE(to_json(builder.take(10)).contains("processes"));

  model::Snapshot ended;
  ended.pid = 4243;
  ended.process_exited = true;
  ASSERT_TRUE(builder.add(ended).ok());
  ASSERT_TRUE(builder.add(ended).ok());
  const auto end = builder.take(10);
  ASSERT_EQ(end.processes.size(), 1u);
  EXPECT_EQ(to_json(end)["processes"]["4243"]["exited"], true);
  // Merged, the later announcement (its end) is what is sent.
  ASSERT_TRUE(builder.add(snap).ok());  // the pid reused: a new process
  auto started = builder.take(10);
  ASSERT_EQ(started.processes.size(), 1u);
  EXPECT_FALSE(started.processes[0].exited);
  builder.process_exited(4243);
  const Json merged = to_json(merge(std::move(started), builder.take(10)));
  EXPECT_EQ(merged["processes"]["4243"]["exited"], true);
}

TEST(BatchBuilder, RenamedOrReusedThreadIsAnnouncedAgain) {
  BatchBuilder builder;
  StreamDecoder decoder;
  model::ThreadStack thread;
  thread.info = {5, 1, 77, "Thread-1"};
  thread.frames = {{"run", "/t.py", 3, model::FrameKind::Python, ""}};
  ASSERT_TRUE(builder.add(thread).ok());
  auto first = decoder.decode(to_json(builder.take(10)));
  ASSERT_TRUE(first.ok());
  thread.info.name = "worker";
  ASSERT_TRUE(builder.add(thread).ok());
  const Json body = to_json(builder.take(10));
  EXPECT_EQ(body["threads"]["77"]["name"], "worker");
  auto second = decoder.decode(body);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->at(0).thread->name, "Thread-1");
  EXPECT_EQ(second->at(0).thread->name, "worker");
}

TEST(StreamDecoder, RejectsUnknownAndTwiceDefinedIdsWithoutChangingState) {
  StreamDecoder decoder;
  const Json frame = {{"file", "/a.py"}, {"line", 1}, {"function", "f"}};
  const Json ok = {
      {"newFrames", {{"5", frame}}}, {"samples", {{5}}}, {"sampleCount", 1}, {"duration", 1}};
  ASSERT_TRUE(decoder.decode(ok).ok());

  Json unknown = {
      {"newFrames", Json::object()}, {"samples", {{5, 6}}}, {"sampleCount", 1}, {"duration", 1}};
  auto result = decoder.decode(unknown);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.message().find("frame ID 6, which no event defined"), std::string::npos)
      << result.message();

  Json twice = {{"newFrames", {{"7", frame}, {"5", frame}}},
                {"samples", Json::array()},
                {"sampleCount", 0},
                {"duration", 1}};
  result = decoder.decode(twice);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.message().find("frame ID 5 is defined twice"), std::string::npos)
      << result.message();
  // The rejected body's frame 7 was not kept.
  EXPECT_EQ(decoder.frame_count(), 1u);
  EXPECT_EQ(decoder.event_count(), 1u);
}

TEST(StreamDecoder, RejectsMalformedBodiesNamingTheField) {
  const Json frame = {{"file", "/a.py"}, {"line", 1}, {"function", "f"}};
  const Json base = {
      {"newFrames", {{"5", frame}}}, {"samples", {{5}}}, {"sampleCount", 1}, {"duration", 1}};
  auto rejects = [&](const char* pointer, Json value, std::string_view mention) {
    Json body = base;
    if (value.is_discarded())
      body.erase(Json::json_pointer(pointer).back());
    else
      body[Json::json_pointer(pointer)] = std::move(value);
    StreamDecoder decoder;
    auto result = decoder.decode(body);
    ASSERT_FALSE(result.ok()) << pointer;
    EXPECT_NE(result.message().find(mention), std::string::npos) << result.message();
  };
  const Json missing(Json::value_t::discarded);
  rejects("/samples", missing, "'samples'");
  rejects("/newFrames", missing, "'newFrames'");
  rejects("/sampleCount", 2, "'sampleCount'");
  rejects("/duration", -1, "'duration'");
  rejects("/samples/0/0", -5, "not a frame ID");
  rejects("/samples/0/0", 9007199254740992u, "not a frame ID");
  rejects("/samples/0/0", "5", "not a frame ID");
  rejects("/newFrames/05", frame, "'05'");
  rejects("/newFrames/9007199254740992", frame, "below 2^53");
  rejects("/newFrames/5/line", "one", "non-negative 'line'");
  rejects("/threadIds", Json::array(), "'threadIds'");
  rejects("/threadIds", {1}, "threadIds[0]");
  rejects("/droppedSampleCount", -1, "'droppedSampleCount'");
}

}  // namespace
}  // namespace dapprof::protocol
