// Channel over real sockets (a Unix socketpair and TCP loopback) with a fake peer in the test.
#include "adapter/transport.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "adapter/options.hpp"
#include "adapter/seq_map.hpp"
#include "adapter/server.hpp"
#include "session_harness.hpp"

namespace dapprof::adapter {
namespace {

using test::FakePeer;
using test::socket_pair;

class ChannelTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (channel_) asio::post(strand_, [c = channel_] { c->close(); });
    io_.stop();
  }

  // Starts a channel on `fd`; messages and the close reason are collected for the test.
  void start(int fd, std::size_t max = protocol::kDefaultMaxBodyBytes) {
    channel_ = Channel::create(strand_, fd, fd, "test", max);
    asio::post(strand_, [this] {
      channel_->start(
          [this](Json&& m) {
            std::lock_guard lock(mutex_);
            messages_.push_back(std::move(m));
          },
          [this](const std::string& error) { closed_.set_value(error); });
    });
  }
  std::vector<Json> wait_messages(std::size_t n) {
    for (int i = 0; i < 1000; ++i) {
      {
        std::lock_guard lock(mutex_);
        if (messages_.size() >= n) return messages_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::lock_guard lock(mutex_);
    return messages_;
  }

  test::IoThread io_;
  Channel::Executor strand_ = asio::make_strand(io_.context());
  std::shared_ptr<Channel> channel_;
  std::mutex mutex_;
  std::vector<Json> messages_;
  std::promise<std::string> closed_;
};

TEST_F(ChannelTest, DecodesCoalescedAndFragmentedFramesInOrder) {
  auto [ours, theirs] = socket_pair();
  FakePeer peer(theirs);
  start(ours);
  peer.send_raw(protocol::encode_frame({{"seq", 1}}) + protocol::encode_frame({{"seq", 2}}));
  const std::string third = protocol::encode_frame({{"seq", 3}, {"text", "héllo"}});
  for (char c : third) {
    peer.send_raw(std::string(1, c));
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  auto got = wait_messages(3);
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)]["seq"], i + 1);
  EXPECT_EQ(got[2]["text"], "héllo");
}

TEST_F(ChannelTest, SendsWholeFramesInOrder) {
  auto [ours, theirs] = socket_pair();
  FakePeer peer(theirs);
  start(ours);
  asio::post(strand_, [this] {
    for (int i = 1; i <= 500; ++i) channel_->send({{"seq", i}, {"pad", std::string(1000, 'x')}});
  });
  for (int i = 1; i <= 500; ++i) {
    auto m = peer.recv();
    ASSERT_TRUE(m) << "message " << i;
    EXPECT_EQ((*m)["seq"], i);
  }
}

TEST_F(ChannelTest, OversizeBodyClosesWithAnError) {
  auto [ours, theirs] = socket_pair();
  FakePeer peer(theirs);
  start(ours, 100);
  peer.send_raw("Content-Length: 101\r\n\r\n");
  auto future = closed_.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_NE(future.get().find("exceeds the limit"), std::string::npos);
}

TEST_F(ChannelTest, PeerEofIsAnOrderlyClose) {
  auto [ours, theirs] = socket_pair();
  FakePeer peer(theirs);
  start(ours);
  peer.close();
  auto future = closed_.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(future.get(), "");
}

TEST_F(ChannelTest, TcpChannelSetsNoDelayAndHalfClosesAfterFlush) {
  asio::ip::tcp::acceptor acceptor(io_.context(), {asio::ip::make_address("127.0.0.1"), 0});
  const auto port = acceptor.local_endpoint().port();
  int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  asio::ip::tcp::socket accepted = acceptor.accept();
  const int fd = ::dup(accepted.native_handle());
  accepted.close();
  FakePeer peer(client);
  start(fd);
  int nodelay = 0;
  socklen_t len = sizeof nodelay;
  ASSERT_EQ(::getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
  EXPECT_NE(nodelay, 0);
  asio::post(strand_, [this] {
    channel_->send({{"seq", 1}, {"type", "event"}});
    channel_->close_write_when_flushed();
  });
  auto m = peer.recv();
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)["seq"], 1);
  EXPECT_TRUE(peer.wait_eof());
  // Half-closed: the peer can still talk to us.
  peer.send({{"seq", 7}});
  auto got = wait_messages(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0]["seq"], 7);
}

TEST(SeqMapper, RenumbersReverseRequestsAndMapsAnswersBackOnce) {
  SeqMapper seq;
  EXPECT_EQ(seq.next_client_seq(), 1);
  const auto mapped = seq.map_reverse_request(42);
  EXPECT_EQ(mapped, 2);
  EXPECT_EQ(seq.next_client_seq(), 3);
  EXPECT_EQ(seq.take_upstream_seq(mapped), 42);
  EXPECT_FALSE(seq.take_upstream_seq(mapped));  // answered once
  EXPECT_FALSE(seq.take_upstream_seq(3));       // never a reverse request
  EXPECT_EQ(seq.pending(), 0u);
}

TEST(Options, ParsesHostPort) {
  auto a = parse_host_port("127.0.0.1:4711");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 4711);
  auto b = parse_host_port("[::1]:0");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "::1");
  EXPECT_FALSE(parse_host_port("127.0.0.1"));
  EXPECT_FALSE(parse_host_port("127.0.0.1:70000"));
  EXPECT_FALSE(parse_host_port("127.0.0.1:x"));
}

TEST(Options, NonLoopbackListenNeedsAllowRemote) {
  EXPECT_TRUE(check_listen_address("127.0.0.1", false));
  EXPECT_TRUE(check_listen_address("::1", false));
  EXPECT_TRUE(check_listen_address("localhost", false));
  auto refused = check_listen_address("0.0.0.0", false);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("--allow-remote"), std::string::npos);
  EXPECT_TRUE(check_listen_address("0.0.0.0", true));
  EXPECT_FALSE(check_listen_address("not-an-address", false));
}

}  // namespace
}  // namespace dapprof::adapter
