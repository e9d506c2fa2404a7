// Session logic over real sockets: each test drives a fake client and a fake upstream adapter
// (the far ends of socketpairs) while the session runs on an io_context thread, as in the daemon.
#include "adapter/session.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "fake_sampler.hpp"
#include "session_harness.hpp"

namespace dapprof::adapter {
namespace {

using test::FakePeer;
using test::socket_pair;
using Peers = test::SessionPeers;

Json request(std::int64_t seq, const std::string& command, Json arguments = Json::object()) {
  return Json{{"seq", seq}, {"type", "request"}, {"command", command}, {"arguments", arguments}};
}

class SessionTest : public ::testing::Test {
 protected:
  void TearDown() override {
    io_.stop();
    for (auto& p : peers_) p->session->abort();
  }

  Peers& make(std::shared_ptr<test::FakeSampling> sampling = {},
              std::size_t max_message_size = protocol::kDefaultMaxBodyBytes) {
    Session::Config config;
    config.max_message_size = max_message_size;
    if (sampling) config.profiling.start_sampler = sampling->starter();
    peers_.push_back(test::start_session(io_.context(), std::move(config)));
    return *peers_.back();
  }

  test::IoThread io_;
  std::vector<std::unique_ptr<Peers>> peers_;
};

TEST_F(SessionTest, InitializeGainsSupportsProfilingAndEverythingElsePassesThrough) {
  auto& p = make();
  Json init = request(1, "initialize", {{"adapterID", "debugpy"}, {"x-unknown", {1, 2}}});
  init["x-top-level"] = "kept";
  p.client->send(init);
  auto forwarded = p.upstream->recv();
  ASSERT_TRUE(forwarded);
  EXPECT_EQ(*forwarded, init);  // unknown fields and key order intact

  Json response = {{"seq", 1},
                   {"type", "response"},
                   {"request_seq", 1},
                   {"success", true},
                   {"command", "initialize"},
                   {"body", {{"supportsConfigurationDoneRequest", true}, {"x-cap", "y"}}},
                   {"x-extra", 42}};
  p.upstream->send(response);
  auto got = p.client->recv();
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)["body"]["supportsProfiling"], true);
  EXPECT_EQ((*got)["body"]["supportsProfilingStacks"], true);
  EXPECT_EQ((*got)["body"]["supportsConfigurationDoneRequest"], true);
  EXPECT_EQ((*got)["body"]["x-cap"], "y");
  EXPECT_EQ((*got)["x-extra"], 42);
  EXPECT_EQ((*got)["request_seq"], 1);
}

TEST_F(SessionTest, ProfilingRequestsAreAnsweredByDapprofAndNeverForwarded) {
  auto state = std::make_shared<test::FakeSampling>();
  auto& p = make(state);

  p.client->send(request(1, "startProfiling"));
  auto early = p.client->recv();
  ASSERT_TRUE(early);
  EXPECT_EQ((*early)["success"], false);
  EXPECT_EQ((*early)["request_seq"], 1);
  EXPECT_NE((*early)["message"].get<std::string>().find("no debuggee yet"), std::string::npos);
  EXPECT_EQ((*early)["body"]["error"]["id"], 2002);
  EXPECT_EQ(state->starts(), 0);

  p.upstream->send({{"seq", 9},
                    {"type", "event"},
                    {"event", "process"},
                    {"body", {{"name", "prog.py"}, {"systemProcessId", 4242}}}});
  auto process = p.client->recv();
  ASSERT_TRUE(process);
  EXPECT_EQ((*process)["body"]["systemProcessId"], 4242);

  p.client->send(request(2, "startProfiling", {{"rate", 250}}));
  auto started = p.client->recv();
  ASSERT_TRUE(started);
  EXPECT_EQ((*started)["success"], true);
  EXPECT_EQ((*started)["request_seq"], 2);
  EXPECT_EQ((*started)["command"], "startProfiling");
  EXPECT_EQ((*started)["body"]["rate"], 250);
  EXPECT_EQ(state->pid(), 4242);
  EXPECT_EQ(state->settings().rate_hz, 250);

  p.client->send(request(3, "startProfiling"));
  auto again = p.client->recv();
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)["success"], false);
  EXPECT_EQ((*again)["body"]["error"]["id"], 2003);
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)["success"], false);
  EXPECT_NE((*again)["message"].get<std::string>().find("already being profiled"),
            std::string::npos);

  // Snapshots come from the sampler's thread; a timer on the strand sends them as batches.
  std::thread([state] { state->snapshot(2, 3); }).join();
  auto data = p.client->recv();
  ASSERT_TRUE(data);
  EXPECT_EQ((*data)["event"], "profilingData");
  EXPECT_EQ((*data)["body"]["sampleCount"], 2);

  // The last batch goes out before the stopProfiling response.
  state->snapshot(1, 2);
  p.client->send(request(4, "stopProfiling"));
  auto last = p.client->recv();
  ASSERT_TRUE(last);
  EXPECT_EQ((*last)["event"], "profilingData");
  EXPECT_EQ((*last)["body"]["sampleCount"], 1);
  auto stopped = p.client->recv();
  ASSERT_TRUE(stopped);
  EXPECT_EQ((*stopped)["success"], true);
  EXPECT_EQ((*stopped)["body"]["sampleCount"], 3);
  EXPECT_EQ(state->stops(), 1);
  p.client->send(request(5, "stopProfiling"));
  auto not_active = p.client->recv();
  ASSERT_TRUE(not_active);
  EXPECT_EQ((*not_active)["success"], false);

  // Nothing of the above reached the adapter: its next message is the next ordinary request.
  p.client->send(request(6, "threads"));
  auto next = p.upstream->recv();
  ASSERT_TRUE(next);
  EXPECT_EQ((*next)["command"], "threads");
  EXPECT_EQ((*next)["seq"], 6);

  p.client->close();
  ASSERT_TRUE(p.upstream->wait_eof());
  p.upstream->close();
  for (int i = 0; i < 500 && !*p.ended; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(*p.ended);
}

TEST_F(SessionTest, InvalidArgumentsAndForeignPidsAreRefusedBeforeTheProfiler) {
  auto state = std::make_shared<test::FakeSampling>();
  auto& p = make(state);
  // The debuggee is this test process; pid 1 (init) is not in its process tree.
  p.upstream->send({{"seq", 1},
                    {"type", "event"},
                    {"event", "process"},
                    {"body", {{"systemProcessId", ::getpid()}}}});
  ASSERT_TRUE(p.client->recv());

  p.client->send(request(1, "startProfiling", {{"rate", 0}}));
  auto bad_rate = p.client->recv();
  ASSERT_TRUE(bad_rate);
  EXPECT_EQ((*bad_rate)["success"], false);
  EXPECT_EQ((*bad_rate)["body"]["error"]["id"], 2001);
  EXPECT_NE((*bad_rate)["message"].get<std::string>().find("rate"), std::string::npos);

  // Arguments that are not an object get the same kind of error as a wrong field, from either
  // request, before any state is looked at (stopProfiling has nothing running here).
  int seq = 10;
  for (const Json& not_object : {Json::array(), Json("x"), Json(5)}) {
    for (const char* command : {"startProfiling", "stopProfiling", "exportProfile"}) {
      p.client->send(request(seq++, command, not_object));
      auto refused = p.client->recv();
      ASSERT_TRUE(refused);
      EXPECT_EQ((*refused)["success"], false);
      EXPECT_EQ((*refused)["body"]["error"]["id"], 2001) << command << " " << not_object.dump();
      EXPECT_NE((*refused)["message"].get<std::string>().find("must be a JSON object"),
                std::string::npos);
    }
  }

  p.client->send(request(2, "startProfiling", {{"pid", 1}}));
  auto foreign = p.client->recv();
  ASSERT_TRUE(foreign);
  EXPECT_EQ((*foreign)["success"], false);
  EXPECT_NE((*foreign)["message"].get<std::string>().find("not part of this debug session"),
            std::string::npos);
  EXPECT_EQ(state->starts(), 0);

  p.client->send(request(3, "startProfiling", {{"pid", ::getpid()}, {"rate", 500}}));
  auto own = p.client->recv();
  ASSERT_TRUE(own);
  EXPECT_EQ((*own)["success"], true);
  EXPECT_EQ(state->pid(), ::getpid());
  EXPECT_EQ((*own)["body"]["rate"], 500);
}

TEST_F(SessionTest, RunEndingByItselfSendsItsDataThenProfilingStopped) {
  auto state = std::make_shared<test::FakeSampling>();
  auto& p = make(state);
  p.upstream->send({{"seq", 1},
                    {"type", "event"},
                    {"event", "process"},
                    {"body", {{"systemProcessId", ::getpid()}}}});
  ASSERT_TRUE(p.client->recv());
  p.client->send(request(1, "startProfiling", {{"batchIntervalMs", 5000}}));
  ASSERT_TRUE(p.client->recv());
  std::thread([state] {
    state->snapshot(2);
    // Before any batch was due: ending must deliver what was sampled by itself.
    state->end(sampler::StopReason::Exited, "process exited");
  }).join();
  {
    auto data = p.client->recv();
    ASSERT_TRUE(data);
    EXPECT_EQ((*data)["event"], "profilingData");
    EXPECT_EQ((*data)["body"]["sampleCount"], 2);
  }
  auto stopped = p.client->recv();
  ASSERT_TRUE(stopped);
  EXPECT_EQ((*stopped)["event"], "profilingStopped");
  EXPECT_EQ((*stopped)["body"]["reason"], "exited");
  EXPECT_EQ((*stopped)["body"]["message"], "process exited");
  EXPECT_EQ((*stopped)["body"]["sampleCount"], 2);
  p.client->send(request(2, "startProfiling"));  // may start again
  auto again = p.client->recv();
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)["success"], true);
}

TEST_F(SessionTest, DefaultProfilerReportsWhyItCannotSample) {
  // A debuggee that no longer exists: the live profiler's attach error reaches the client.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  auto& p = make();
  p.upstream->send(
      {{"seq", 1}, {"type", "event"}, {"event", "process"}, {"body", {{"systemProcessId", gone}}}});
  ASSERT_TRUE(p.client->recv());
  p.client->send(request(1, "startProfiling"));
  auto refused = p.client->recv();
  ASSERT_TRUE(refused);
  EXPECT_EQ((*refused)["success"], false);
  EXPECT_EQ((*refused)["body"]["error"]["id"], 2008);
  EXPECT_NE((*refused)["message"].get<std::string>().find(std::to_string(gone)), std::string::npos);
}

TEST_F(SessionTest, ReverseRequestIsRenumberedAndTheAnswerMappedBack) {
  auto& p = make();
  p.upstream->send(
      {{"seq", 5}, {"type", "event"}, {"event", "output"}, {"body", {{"output", "x"}}}});
  p.upstream->send({{"seq", 6},
                    {"type", "request"},
                    {"command", "runInTerminal"},
                    {"arguments", {{"kind", "integrated"}, {"args", {"python3", "-c", "1"}}}}});
  auto event = p.client->recv();
  auto reverse = p.client->recv();
  ASSERT_TRUE(event && reverse);
  const auto reverse_seq = (*reverse)["seq"].get<std::int64_t>();
  EXPECT_GT(reverse_seq, (*event)["seq"].get<std::int64_t>());
  EXPECT_EQ((*reverse)["arguments"]["args"][0], "python3");

  // Inject a dapprof-owned message so that client seq and upstream seq really diverge.
  p.client->send(request(1, "startProfiling"));
  auto refused = p.client->recv();
  ASSERT_TRUE(refused);
  EXPECT_GT((*refused)["seq"].get<std::int64_t>(), reverse_seq);

  p.client->send({{"seq", 2},
                  {"type", "response"},
                  {"request_seq", reverse_seq},
                  {"success", true},
                  {"command", "runInTerminal"},
                  {"body", {{"processId", 99}}}});
  auto answer = p.upstream->recv();
  ASSERT_TRUE(answer);
  EXPECT_EQ((*answer)["request_seq"], 6);
  EXPECT_EQ((*answer)["body"]["processId"], 99);
  EXPECT_EQ((*answer)["seq"], 2);
}

TEST_F(SessionTest, ClientSideSeqIsStrictlyIncreasing) {
  auto& p = make();
  std::int64_t last = 0;
  for (int i = 0; i < 20; ++i) {
    // The adapter reuses and reorders seqs freely; the client must still see 1, 2, 3, ...
    p.upstream->send({{"seq", 1000 - i}, {"type", "event"}, {"event", "output"}, {"body", {}}});
    p.client->send(request(i + 1, "startProfiling"));
    for (int k = 0; k < 2; ++k) {
      auto m = p.client->recv();
      ASSERT_TRUE(m);
      const auto seq = (*m)["seq"].get<std::int64_t>();
      EXPECT_GT(seq, last);
      last = seq;
    }
  }
}

TEST_F(SessionTest, DisconnectResponseClosesTheAdaptersInput) {
  auto& p = make();
  p.client->send(request(1, "disconnect"));
  auto forwarded = p.upstream->recv();
  ASSERT_TRUE(forwarded);
  EXPECT_EQ((*forwarded)["command"], "disconnect");
  p.upstream->send({{"seq", 3},
                    {"type", "response"},
                    {"request_seq", 1},
                    {"success", true},
                    {"command", "disconnect"}});
  auto response = p.client->recv();
  ASSERT_TRUE(response);
  EXPECT_EQ((*response)["command"], "disconnect");
  EXPECT_TRUE(p.upstream->wait_eof());  // a stdio debugpy adapter only exits on this
  p.upstream->close();
  EXPECT_TRUE(p.client->wait_eof());
}

TEST_F(SessionTest, AdapterGoingAwayGivesTheClientTerminated) {
  auto& p = make();
  p.upstream->close();
  auto terminated = p.client->recv();
  ASSERT_TRUE(terminated);
  EXPECT_EQ((*terminated)["event"], "terminated");
  p.client->send(request(1, "disconnect"));
  auto response = p.client->recv();
  ASSERT_TRUE(response);
  EXPECT_EQ((*response)["success"], true);
  EXPECT_TRUE(p.client->wait_eof());
  p.client->close();  // as a client does once the adapter has closed its side
  for (int i = 0; i < 500 && !*p.ended; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(*p.ended);
}

class MalformedInput : public SessionTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(MalformedInput, FromTheClientClosesOnlyThatSession) {
  auto& bad = make({}, 1024);
  auto& good = make({}, 1024);
  bad.client->send_raw(GetParam());
  EXPECT_TRUE(bad.client->wait_eof());
  EXPECT_TRUE(bad.upstream->wait_eof());  // the adapter is told, by end of input
  bad.upstream->close();
  for (int i = 0; i < 500 && !*bad.ended; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(*bad.ended);

  good.client->send(request(1, "threads"));
  auto forwarded = good.upstream->recv();
  ASSERT_TRUE(forwarded);
  good.upstream->send({{"seq", 1},
                       {"type", "response"},
                       {"request_seq", 1},
                       {"success", true},
                       {"command", "threads"},
                       {"body", {{"threads", Json::array()}}}});
  auto response = good.client->recv();
  ASSERT_TRUE(response);
  EXPECT_EQ((*response)["command"], "threads");
  EXPECT_FALSE(*good.ended);
}

TEST_P(MalformedInput, FromTheAdapterEndsTheSessionWithTerminated) {
  auto& p = make({}, 1024);
  p.upstream->send_raw(GetParam());
  auto terminated = p.client->recv();
  ASSERT_TRUE(terminated);
  EXPECT_EQ((*terminated)["event"], "terminated");
}

INSTANTIATE_TEST_SUITE_P(Frames, MalformedInput,
                         ::testing::Values("Content-Length: abc\r\n\r\n{}",
                                           "Content-Length: 5\r\n\r\nnot j",
                                           "Content-Length: 2\r\n\r\n[]",
                                           "no header at all\r\n\r\n",
                                           "Content-Length: 999999\r\n\r\n{"));

}  // namespace
}  // namespace dapprof::adapter
