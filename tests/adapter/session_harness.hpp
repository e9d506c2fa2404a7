#pragma once
// What the adapter's unit tests share: an io_context on a thread of its own (as the daemon runs
// one), socketpairs, and a Session between two fake peers, the client and the debug adapter,
// each the far end of a socketpair driven by the test.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>

#include <asio.hpp>
#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "adapter/session.hpp"
#include "fake_peer.hpp"

namespace dapprof::adapter::test {

// Runs an io_context on its own thread until stop() or destruction.
class IoThread {
 public:
  IoThread() {
    ::signal(SIGPIPE, SIG_IGN);  // a peer closing mid-write is an error code, as in the daemon
    thread_ = std::thread([this] { io_.run(); });
  }
  ~IoThread() { stop(); }
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  asio::io_context& context() { return io_; }

  void stop() {
    if (!thread_.joinable()) return;
    work_.reset();
    io_.stop();
    thread_.join();
  }

 private:
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      io_.get_executor()};
  std::thread thread_;
};

// Both ends of a new Unix stream socketpair.
inline std::pair<int, int> socket_pair() {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  return {fds[0], fds[1]};
}

// A started session and the test's ends of its two connections.
struct SessionPeers {
  std::shared_ptr<Session> session;
  std::unique_ptr<FakePeer> client;
  std::unique_ptr<FakePeer> upstream;
  std::shared_ptr<std::atomic<bool>> ended = std::make_shared<std::atomic<bool>>(false);
};

// Starts a session on `io` with `config`, whose connector and on_end are set here: the debug
// adapter is the returned `upstream` peer, and `ended` is set when the session ends.
inline std::unique_ptr<SessionPeers> start_session(asio::io_context& io, Session::Config config) {
  auto peers = std::make_unique<SessionPeers>();
  auto [client_ours, client_theirs] = socket_pair();
  auto [upstream_ours, upstream_theirs] = socket_pair();
  const int up = upstream_ours;
  config.connector = [up, max = config.max_message_size](Channel::Executor strand, Reaper::OnExit,
                                                         UpstreamReady ready) {
    Upstream upstream;
    upstream.channel = Channel::create(strand, up, up, "fake adapter", max);
    upstream.description = "fake adapter";
    // The fake adapter is this test process: the pids its events name are this machine's.
    upstream.peer.host_pids = true;
    ready(std::move(upstream));
  };
  config.on_end = [ended = peers->ended] { *ended = true; };
  peers->session = Session::create(asio::make_strand(io), client_ours, client_ours, config);
  peers->client = std::make_unique<FakePeer>(client_theirs);
  peers->upstream = std::make_unique<FakePeer>(upstream_theirs);
  peers->session->start();
  return peers;
}

}  // namespace dapprof::adapter::test
