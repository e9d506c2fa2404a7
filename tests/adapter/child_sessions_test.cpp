// Child processes' sessions (debugpyAttach redirected to a listener of dapprof's) over real
// sockets: a fake client and a fake debug adapter drive the parent session through socketpairs,
// and "debugpy's adapter port" is a real loopback listener of the test.
#include "adapter/child_sessions.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "adapter/session.hpp"
#include "adapter/trace.hpp"
#include "session_harness.hpp"

namespace dapprof::adapter {
namespace {

using test::FakePeer;
using test::socket_pair;
using Parent = test::SessionPeers;
using namespace std::chrono_literals;

// A loopback TCP listener of the test's: stands for the port of debugpy's adapter.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), size), 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size), 0);
    port_ = ntohs(address.sin_port);
  }
  ~Listener() { close(); }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  std::uint16_t port() const { return port_; }
  // The next connection, or nullptr if none comes within the timeout.
  std::unique_ptr<FakePeer> accept(std::chrono::milliseconds timeout = 5s) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return nullptr;
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    return fd < 0 ? nullptr : std::make_unique<FakePeer>(fd);
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

// A connected socket to 127.0.0.1:port, or -errno.
int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd);
    return -error;
  }
  return fd;
}

// A port nothing listens on (any more).
std::uint16_t closed_port() {
  Listener gone;
  return gone.port();
}

Json request(std::int64_t seq, const std::string& command, Json arguments = Json::object()) {
  return Json{{"seq", seq}, {"type", "request"}, {"command", command}, {"arguments", arguments}};
}

Json attach_event(std::int64_t seq, std::int64_t sub_process_id, std::uint16_t port) {
  return Json{{"seq", seq},
              {"type", "event"},
              {"event", "debugpyAttach"},
              {"body",
               {{"name", fmt::format("Subprocess {}", sub_process_id)},
                {"type", "python"},
                {"request", "attach"},
                {"subProcessId", sub_process_id},
                {"justMyCode", true},
                {"connect", {{"host", "127.0.0.1"}, {"port", port}}}}}};
}

// The next event named `name`, skipping anything else.
std::optional<Json> next_event(FakePeer& peer, const std::string& name) {
  for (;;) {
    auto message = peer.recv();
    if (!message) return std::nullopt;
    if ((*message)["type"] == "event" && (*message)["event"] == name) return message;
  }
}

std::optional<Json> next_response(FakePeer& peer) {
  for (;;) {
    auto message = peer.recv();
    if (!message || (*message)["type"] == "response") return message;
  }
}

template <typename Predicate>
bool wait_until(Predicate predicate, std::chrono::milliseconds timeout = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

class ChildSessionsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    io_.stop();
    for (auto& p : parents_) p->session->abort();
    std::lock_guard lock(mutex_);
    for (auto& child : children_) child->abort();
  }

  Parent& make_parent(std::size_t max_message_size = protocol::kDefaultMaxBodyBytes,
                      std::shared_ptr<TraceWriter> trace = nullptr) {
    Session::Config config;
    config.max_message_size = max_message_size;
    config.trace = std::move(trace);
    // As the daemon's runtime does: child sessions are kept so that they can be closed at the end.
    config.start_child = [this](std::shared_ptr<Session> child) {
      {
        std::lock_guard lock(mutex_);
        children_.push_back(child);
      }
      child->start();
    };
    parents_.push_back(test::start_session(io_.context(), std::move(config)));
    return *parents_.back();
  }

  // Announces a child on `announcer` (the far end of a session's upstream); returns the port
  // the client on `listener_client` is told to attach to.
  static std::uint16_t announce(FakePeer& announcer, FakePeer& listener_client,
                                std::int64_t sub_process_id, std::uint16_t port) {
    announcer.send(attach_event(90, sub_process_id, port));
    auto event = next_event(listener_client, "debugpyAttach");
    EXPECT_TRUE(event);
    if (!event) return 0;
    const Json& connect = (*event)["body"]["connect"];
    EXPECT_EQ(connect["host"], "127.0.0.1");
    return connect["port"].get<std::uint16_t>();
  }

  std::size_t children() {
    std::lock_guard lock(mutex_);
    return children_.size();
  }

  test::IoThread io_;
  std::vector<std::unique_ptr<Parent>> parents_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<Session>> children_;
};

TEST_F(ChildSessionsTest, ConnectIsRedirectedToAListenerThatRelaysToDebugpy) {
  Listener debugpy;
  auto& parent = make_parent();
  Json announced = attach_event(7, 4321, debugpy.port());
  parent.upstream->send(announced);
  auto event = next_event(*parent.client, "debugpyAttach");
  ASSERT_TRUE(event);
  Json& body = (*event)["body"];
  const auto port = body["connect"]["port"].get<std::uint16_t>();
  EXPECT_EQ(body["connect"], (Json{{"host", "127.0.0.1"}, {"port", port}}));
  EXPECT_NE(port, debugpy.port());
  // Everything else as debugpy sent it, and nothing that names debugpy's port.
  body.erase("connect");
  announced["body"].erase("connect");
  EXPECT_EQ(body, announced["body"]);

  // The client attaches there; dapprof connects to debugpy's port and relays, as a full session.
  FakePeer child_client(connect_loopback(port));
  ASSERT_GE(child_client.fd(), 0);
  auto child_upstream = debugpy.accept();
  ASSERT_TRUE(child_upstream);
  const Json init = request(1, "initialize", {{"adapterID", "debugpy"}});
  child_client.send(init);
  EXPECT_EQ(child_upstream->recv(), init);
  child_upstream->send(Json{{"seq", 1},
                            {"type", "response"},
                            {"request_seq", 1},
                            {"success", true},
                            {"command", "initialize"},
                            {"body", Json::object()}});
  auto response = child_client.recv();
  ASSERT_TRUE(response);
  EXPECT_EQ((*response)["body"]["supportsProfiling"], true);
  EXPECT_EQ(children(), 1u);
}

TEST_F(ChildSessionsTest, ChildSessionsUseTheParentsConfig) {
  Listener debugpy;
  char path[] = "/tmp/dapprof-child-trace-XXXXXX";
  const int trace_fd = ::mkstemp(path);
  ASSERT_GE(trace_fd, 0);
  ::close(trace_fd);
  auto trace = TraceWriter::open(path);
  ASSERT_TRUE(trace);
  auto& parent = make_parent(4096, *trace);
  const auto port = announce(*parent.upstream, *parent.client, 4321, debugpy.port());
  FakePeer child_client(connect_loopback(port));
  auto child_upstream = debugpy.accept();
  ASSERT_TRUE(child_upstream);
  child_client.send(request(1, "threads"));
  ASSERT_TRUE(child_upstream->recv());
  // The parent's trace records the child session's messages too.
  std::stringstream traced;
  traced << std::ifstream(path).rdbuf();
  std::remove(path);
  EXPECT_NE(traced.str().find("\"command\":\"threads\""), std::string::npos) << traced.str();
  // The parent's maximum message size applies: a larger message ends the child session.
  child_client.send(request(2, "evaluate", {{"expression", std::string(8192, 'x')}}));
  EXPECT_TRUE(child_client.wait_eof());
  EXPECT_FALSE(*parent.ended);
}

TEST_F(ChildSessionsTest, OneListenerPerDebugpyAddressAndEachConnectionItsOwnSession) {
  Listener debugpy;
  auto& parent = make_parent();
  const auto first = announce(*parent.upstream, *parent.client, 11, debugpy.port());
  const auto second = announce(*parent.upstream, *parent.client, 12, debugpy.port());
  EXPECT_EQ(first, second);
  FakePeer a(connect_loopback(first));
  FakePeer b(connect_loopback(first));
  auto a_up = debugpy.accept();
  auto b_up = debugpy.accept();
  ASSERT_TRUE(a_up && b_up);
  EXPECT_TRUE(wait_until([&] { return children() == 2; }));
}

TEST_F(ChildSessionsTest, ListenerClosesWhenTheParentSessionEnds) {
  Listener debugpy;
  auto& parent = make_parent();
  const auto port = announce(*parent.upstream, *parent.client, 4321, debugpy.port());
  // A child attached before the parent ends keeps its session.
  FakePeer child_client(connect_loopback(port));
  auto child_upstream = debugpy.accept();
  ASSERT_TRUE(child_upstream);
  parent.client->close();
  parent.upstream->close();
  ASSERT_TRUE(wait_until([&] { return parent.ended->load(); }));
  EXPECT_EQ(connect_loopback(port), -ECONNREFUSED);
  child_client.send(request(1, "threads"));
  EXPECT_TRUE(child_upstream->recv());
}

TEST_F(ChildSessionsTest, ChildWhoseDebugpyIsGoneGetsAnErrorAndEndsCleanly) {
  const std::uint16_t gone = closed_port();
  auto& parent = make_parent();
  const auto port = announce(*parent.upstream, *parent.client, 4321, gone);
  FakePeer child_client(connect_loopback(port));
  ASSERT_GE(child_client.fd(), 0);
  child_client.send(request(1, "initialize"));
  auto refused = next_response(child_client);
  ASSERT_TRUE(refused);
  EXPECT_EQ((*refused)["success"], false);
  const std::string message = (*refused)["message"];
  EXPECT_NE(message.find(fmt::format("127.0.0.1:{}", gone)), std::string::npos) << message;
  EXPECT_NE(message.find("announced this child process"), std::string::npos) << message;
  child_client.send(request(2, "disconnect"));
  auto disconnected = next_response(child_client);
  ASSERT_TRUE(disconnected);
  EXPECT_EQ((*disconnected)["success"], true);
  EXPECT_TRUE(child_client.wait_eof());
  EXPECT_FALSE(*parent.ended);  // the parent's session is not affected
}

TEST_F(ChildSessionsTest, GrandchildAnnouncedWithTheChildsAddressGoesToDebugpyDirectly) {
  Listener debugpy;
  auto& parent = make_parent();
  const auto child_port = announce(*parent.upstream, *parent.client, 11, debugpy.port());
  FakePeer child_client(connect_loopback(child_port));
  auto child_upstream = debugpy.accept();
  ASSERT_TRUE(child_upstream);
  // debugpy announces a grandchild with the `connect` the child attached with: dapprof's port.
  const auto grandchild_port = announce(*child_upstream, child_client, 12, child_port);
  EXPECT_NE(grandchild_port, child_port);
  EXPECT_NE(grandchild_port, debugpy.port());
  // Without the parent's session (and its listener), the grandchild still reaches debugpy.
  parent.client->close();
  parent.upstream->close();
  ASSERT_TRUE(wait_until([&] { return parent.ended->load(); }));
  FakePeer grandchild_client(connect_loopback(grandchild_port));
  ASSERT_GE(grandchild_client.fd(), 0);
  auto grandchild_upstream = debugpy.accept();
  ASSERT_TRUE(grandchild_upstream);
  grandchild_client.send(request(1, "threads"));
  EXPECT_TRUE(grandchild_upstream->recv());
}

TEST_F(ChildSessionsTest, EventWithoutAnAddressPassesUnchangedAndTheUserIsTold) {
  auto& parent = make_parent();
  Json announced = attach_event(7, 4321, 1);
  announced["body"].erase("connect");
  parent.upstream->send(announced);
  auto output = next_event(*parent.client, "output");
  ASSERT_TRUE(output);
  EXPECT_NE((*output)["body"]["output"].get<std::string>().find("4321 cannot be profiled"),
            std::string::npos);
  auto event = next_event(*parent.client, "debugpyAttach");
  ASSERT_TRUE(event);
  EXPECT_EQ((*event)["body"], announced["body"]);
}

}  // namespace
}  // namespace dapprof::adapter
