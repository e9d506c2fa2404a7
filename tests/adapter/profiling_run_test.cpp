// The live-profiling state machine against a fake sampler (fake_sampler.hpp) and a sink that
// records what the client would receive: every order of requests, attach outcomes and sampler
// endings the session can meet, on a real strand with the sampler's calls from other threads.
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <future>

#include "adapter/profiling/run.hpp"
#include "fake_sampler.hpp"
#include "protocol/stream_decoder.hpp"
#include "recording_sink.hpp"
#include "session_harness.hpp"

namespace dapprof::adapter::profiling {
namespace {

using namespace std::chrono_literals;

using test::RecordingSink;

protocol::StartProfilingArguments start_arguments(int rate, bool idle, int batch_interval_ms) {
  protocol::StartProfilingArguments a;
  a.rate = rate;
  a.mode = idle ? protocol::SamplingMode::Wall : protocol::SamplingMode::Active;
  a.batch_interval_ms = batch_interval_ms;
  return a;
}

protocol::StopProfilingArguments hiding_debugger() {
  protocol::StopProfilingArguments a;
  a.hide_debugger = true;
  return a;
}

Json request(int seq, const char* command) {
  return {{"seq", seq}, {"type", "request"}, {"command", command}};
}

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    run_ = profiling::Run::create(
        strand_, sink_, {.max_pending_samples = 100, .start_sampler = sampling_->starter()});
  }
  void TearDown() override {
    on_strand([&] { run_->close(); });
    io_.stop();
  }

  // Runs `f` on the run's strand and waits for it.
  template <typename F>
  void on_strand(F f) {
    std::promise<void> done;
    asio::post(strand_, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }
  State state() {
    State s{};
    on_strand([&] { s = run_->state(); });
    return s;
  }
  void start(int seq, protocol::StartProfilingArguments arguments = {}) {
    on_strand([&] { run_->start(request(seq, "startProfiling"), arguments, 4242); });
  }
  void stop(int seq, protocol::StopProfilingArguments arguments = {}) {
    on_strand([&] { run_->stop(request(seq, "stopProfiling"), arguments); });
  }
  void export_profile(int seq, protocol::ExportProfileArguments arguments = {}) {
    on_strand([&] { run_->export_profile(request(seq, "exportProfile"), arguments); });
  }
  void running(int seq = 1) {
    start(seq);
    auto started = sink_.next();
    ASSERT_TRUE(started && (*started)["success"] == true) << (started ? started->dump() : "");
    ASSERT_EQ(state(), State::Running);
  }

  test::IoThread io_;
  profiling::Run::Executor strand_ = asio::make_strand(io_.context());
  RecordingSink sink_;
  std::shared_ptr<test::FakeSampling> sampling_ = std::make_shared<test::FakeSampling>();
  std::shared_ptr<profiling::Run> run_;
};

TEST_F(RunTest, StartAnswersOnceAttachedWithTheSettingsInEffect) {
  EXPECT_EQ(state(), State::Idle);
  start(1, start_arguments(250, true, 100));
  auto started = sink_.next();
  ASSERT_TRUE(started);
  EXPECT_EQ((*started)["response"], 1);
  EXPECT_EQ((*started)["body"]["pid"], 4242);
  EXPECT_EQ((*started)["body"]["pythonVersion"], "3.12.1");
  EXPECT_EQ((*started)["body"]["rate"], 250);
  EXPECT_EQ(sampling_->settings().rate_hz, 250);
  EXPECT_EQ(sampling_->settings().mode, model::SamplingMode::Wall);
  EXPECT_EQ((*started)["body"]["mode"], "wall");
  EXPECT_EQ(state(), State::Running);
}

TEST_F(RunTest, TheSessionStaysAnswerableDuringAnAttachAndAStopThenIsAnsweredAfterTheStart) {
  sampling_->hold_attach();
  start(1);
  ASSERT_TRUE(sampling_->wait_attaching());
  EXPECT_EQ(state(), State::Attaching);
  start(2);  // start during attach
  auto again = sink_.next();
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)["response"], 2);
  EXPECT_EQ((*again)["id"], 2003);
  export_profile(3);  // nothing to export yet
  EXPECT_EQ((*sink_.next())["id"], 2011);
  stop(4);  // stop during attach: deferred
  EXPECT_TRUE(sink_.quiet());
  sampling_->release();
  auto started = sink_.next();
  ASSERT_TRUE(started);
  EXPECT_EQ((*started)["response"], 1);
  EXPECT_EQ((*started)["success"], true);
  auto stopped = sink_.next_answer();
  ASSERT_TRUE(stopped);
  EXPECT_EQ((*stopped)["response"], 4);
  EXPECT_EQ((*stopped)["success"], true);
  EXPECT_EQ(state(), State::Ended);
  EXPECT_EQ(sampling_->stops(), 1);
}

TEST_F(RunTest, AFailedAttachAnswersTheStartAndTheDeferredStop) {
  // The process exited while being attached to: the sampler's error is the answer.
  sampling_->hold_attach();
  sampling_->fail_attach(Error{"process 4242 exited", ErrorCode::ProcessExited});
  start(1);
  ASSERT_TRUE(sampling_->wait_attaching());
  stop(2);
  sampling_->release();
  auto failed = sink_.next();
  ASSERT_TRUE(failed);
  EXPECT_EQ((*failed)["response"], 1);
  EXPECT_EQ((*failed)["id"], 2009);
  EXPECT_EQ((*failed)["message"], "process 4242 exited");
  auto not_profiling = sink_.next();
  ASSERT_TRUE(not_profiling);
  EXPECT_EQ((*not_profiling)["response"], 2);
  EXPECT_EQ((*not_profiling)["id"], 2004);
  EXPECT_EQ(state(), State::Idle);
  export_profile(3);
  EXPECT_EQ((*sink_.next())["id"], 2011);
  running(4);  // and it can start again
}

TEST_F(RunTest, EndingTheSessionDuringAnAttachAnswersEverythingAndStopsTheSampler) {
  sampling_->hold_attach();
  start(1);
  ASSERT_TRUE(sampling_->wait_attaching());
  stop(2);
  on_strand([&] { run_->end(protocol::StoppedReason::Disconnected); });
  for (int seq : {1, 2}) {
    auto answer = sink_.next();
    ASSERT_TRUE(answer);
    EXPECT_EQ((*answer)["response"], seq);
    EXPECT_EQ((*answer)["success"], false);
    EXPECT_NE((*answer)["message"].get<std::string>().find("session is ending"), std::string::npos);
  }
  sampling_->release();  // the attach completes after all: its sampler is stopped, nothing sent
  for (int i = 0; i < 500 && sampling_->stops() == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(sampling_->stops(), 1);
  EXPECT_TRUE(sink_.quiet());
  EXPECT_EQ(state(), State::Idle);
}

TEST_F(RunTest, StopSendsTheLastDataFirstThenTheSummary) {
  running();
  sampling_->snapshot(3, 4);
  stop(2, hiding_debugger());
  std::uint64_t samples = 0;
  auto stopped = sink_.next_answer(&samples);
  ASSERT_TRUE(stopped);
  EXPECT_EQ(samples, 3u);
  EXPECT_EQ((*stopped)["body"]["sampleCount"], 3);
  EXPECT_EQ((*stopped)["body"]["topFunctions"][0]["function"], "f0");
  EXPECT_EQ((*stopped)["body"]["topFunctions"][0]["self"], 3);
  stop(3);  // collected: a second stop has nothing to stop
  EXPECT_EQ((*sink_.next())["id"], 2004);
  export_profile(4, {.format = model::ProfileFormat::Collapsed});
  auto exported = sink_.next();
  ASSERT_TRUE(exported);
  EXPECT_EQ((*exported)["body"]["content"],
            "f3 (/app/main.py:4);f2 (/app/main.py:3);f1 (/app/main.py:2);f0 (/app/main.py:1) 3\n");
}

TEST_F(RunTest, AnExitEndsTheRunWithItsDataAndOneStopMayStillCollectIt) {
  running();
  sampling_->snapshot(2);
  std::thread([&] { sampling_->end(sampler::StopReason::Exited, "process 4242 exited"); }).join();
  std::uint64_t samples = 0;
  auto ended = sink_.next_answer(&samples);
  ASSERT_TRUE(ended);
  EXPECT_EQ((*ended)["event"], "profilingStopped");
  EXPECT_EQ((*ended)["body"]["reason"], "exited");
  EXPECT_EQ((*ended)["body"]["message"], "process 4242 exited");
  EXPECT_EQ((*ended)["body"]["sampleCount"], 2);
  EXPECT_EQ(samples, 2u);
  EXPECT_EQ(state(), State::Ended);
  stop(2);  // stop after exit: the summary again
  auto late = sink_.next();
  ASSERT_TRUE(late);
  EXPECT_EQ((*late)["success"], true);
  EXPECT_EQ((*late)["body"]["sampleCount"], 2);
  stop(3);
  EXPECT_EQ((*sink_.next())["id"], 2004);
  running(4);  // a new run replaces the ended one
}

TEST_F(RunTest, ASamplerErrorEndsTheRunWithReasonError) {
  running();
  sampling_->end(sampler::StopReason::Error, "reading process 4242 failed: EIO");
  auto ended = sink_.next_answer();
  ASSERT_TRUE(ended);
  EXPECT_EQ((*ended)["body"]["reason"], "error");
  EXPECT_EQ((*ended)["body"]["message"], "reading process 4242 failed: EIO");
  // An end of the session after it changes nothing: the run has ended once.
  on_strand([&] { run_->end(protocol::StoppedReason::Disconnected); });
  EXPECT_TRUE(sink_.quiet());
}

TEST_F(RunTest, ASlowClientGetsDataWhenItDrainsWithDropsCounted) {
  sink_.backlog = 10'000'000;  // far more unread than the run lets pile up ahead of DAP traffic
  start(1, start_arguments(100, false, 10));
  ASSERT_TRUE(sink_.next());
  for (int i = 0; i < 120; ++i) {
    sampling_->snapshot(2);  // 240 samples for a backlog of 100
    std::this_thread::sleep_for(1ms);
  }
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(sink_.quiet(100ms));  // held back while the client is behind
  sink_.backlog = 0;
  on_strand([&] { run_->client_drained(); });
  std::uint64_t delivered = 0, dropped = 0;
  while (auto m = sink_.next(300ms)) {
    delivered += (*m)["body"]["sampleCount"].get<std::uint64_t>();
    dropped += (*m)["body"]["droppedSampleCount"].get<std::uint64_t>();
  }
  EXPECT_GT(dropped, 0u);
  EXPECT_LE(delivered, 100u + 2u);
  stop(2);
  auto stopped = sink_.next_answer(&delivered);
  ASSERT_TRUE(stopped);
  EXPECT_EQ(delivered + dropped, 240u);
  EXPECT_EQ((*stopped)["body"]["droppedSampleCount"], dropped);
  EXPECT_EQ((*stopped)["body"]["sampleCount"], delivered);
}

TEST_F(RunTest, WithStacksEachStackGoesOnceAndSamplesAsRunsAlsoBehindASlowClient) {
  sink_.backlog = 10'000'000;
  auto arguments = start_arguments(100, false, 10);
  arguments.stacks = true;
  start(1, arguments);
  auto started = sink_.next();
  ASSERT_TRUE(started);
  EXPECT_EQ((*started)["body"]["stacks"], true);
  for (int i = 0; i < 120; ++i) {
    sampling_->snapshot(2);  // two threads, one stack: 240 samples for a backlog of 100
    std::this_thread::sleep_for(1ms);
  }
  std::this_thread::sleep_for(100ms);
  sink_.backlog = 0;
  on_strand([&] { run_->client_drained(); });
  stop(2);
  protocol::StreamDecoder decoder;
  std::uint64_t decoded = 0, defined = 0;
  std::optional<Json> m;
  while ((m = sink_.next()) && m->value("event", "") == "profilingData") {
    const Json& body = (*m)["body"];
    EXPECT_TRUE(body.contains("stackIds") && body["samples"].empty()) << body.dump();
    defined += body["newStacks"].size();
    auto samples = decoder.decode(body);
    ASSERT_TRUE(samples.ok()) << samples.message();
    for (const auto& s : *samples) {
      EXPECT_EQ(s.stack.size(), 3u);
      decoded += s.count;
    }
  }
  ASSERT_TRUE(m);
  EXPECT_EQ(defined, 1u);  // announced once, kept when the samples that used it were dropped
  EXPECT_EQ(decoded, decoder.sample_count());
  EXPECT_EQ(decoded + decoder.dropped_sample_count(), 240u);
  EXPECT_GT(decoder.dropped_sample_count(), 0u);
  EXPECT_EQ((*m)["body"]["sampleCount"], decoded);
}

TEST_F(RunTest, ExportWhileRunningGivesEverythingSoFar) {
  running();
  sampling_->snapshot(1, 2);
  export_profile(2, {.format = model::ProfileFormat::Collapsed});
  auto exported = sink_.next_answer();
  ASSERT_TRUE(exported);
  EXPECT_EQ((*exported)["body"]["sampleCount"], 1);
  EXPECT_EQ(state(), State::Running);
}

TEST_F(RunTest, ClosingStopsSamplingAndSilencesTheRun) {
  running();
  on_strand([&] { run_->close(); });
  EXPECT_EQ(sampling_->stops(), 1);
  EXPECT_TRUE(sink_.quiet());
}

}  // namespace
}  // namespace dapprof::adapter::profiling
