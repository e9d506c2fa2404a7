// adapter_bench: what dapprof adds between a DAP client and a debug adapter, measured against
// dap_responder (answers at once, so the proxy's own cost is not hidden behind debugpy's).
//   1. round-trip latency of N requests: direct vs through `dapprof stdio` and `dapprof serve`
//   2. throughput of M `output` events to a client that reads as fast as it can
// Usage: adapter_bench DAPPROF RESPONDER [requests=10000] [events=100000]
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "protocol/framing.hpp"

using dapprof::protocol::Json;
using Clock = std::chrono::steady_clock;

extern char** environ;

namespace {

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "adapter_bench: %s\n", message.c_str());
  std::exit(1);
}

struct Child {
  pid_t pid = -1;
  int to = -1, from = -1;  // its stdin / stdout (when piped)
  ~Child() {
    if (to >= 0) ::close(to);
    if (from >= 0) ::close(from);
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

std::unique_ptr<Child> spawn(const std::vector<std::string>& argv, bool pipe_stdio) {
  auto child = std::make_unique<Child>();
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) die("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  if (!pipe_stdio) posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (::posix_spawn(&child->pid, args[0], &actions, nullptr, args.data(), environ) != 0)
    die("cannot start " + argv[0]);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  child->to = in[1];
  child->from = out[0];
  return child;
}

class Conn {
 public:
  Conn(int rfd, int wfd) : r_(rfd), w_(wfd) {}
  void send(const Json& message) {
    const std::string frame = dapprof::protocol::encode_frame(message);
    std::size_t off = 0;
    while (off < frame.size()) {
      const ssize_t n = ::write(w_, frame.data() + off, frame.size() - off);
      if (n <= 0) die("write failed");
      off += static_cast<std::size_t>(n);
    }
  }
  Json recv() {
    for (;;) {
      auto step = decoder_.next();
      if (auto* m = std::get_if<Json>(&step)) return std::move(*m);
      if (std::holds_alternative<dapprof::protocol::FramingError>(step)) die("bad frame");
      const ssize_t n = ::read(r_, buffer_.data(), buffer_.size());
      if (n <= 0) die("connection closed");
      bytes_ += static_cast<std::size_t>(n);
      decoder_.feed(std::string_view(buffer_.data(), static_cast<std::size_t>(n)));
    }
  }
  std::size_t bytes() const { return bytes_; }

 private:
  int r_, w_;
  dapprof::protocol::FrameDecoder decoder_;
  std::vector<char> buffer_ = std::vector<char>(1 << 16);
  std::size_t bytes_ = 0;
};

int connect_tcp(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < 200; ++i) {
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  die(fmt::format("cannot connect to port {}", port));
}

std::string read_line(int fd) {
  std::string line;
  char c;
  while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

struct Target {
  std::string name;
  std::vector<std::unique_ptr<Child>> children;
  std::optional<Conn> conn;
  int socket = -1;
  ~Target() {
    if (socket >= 0) ::close(socket);
  }
};

std::unique_ptr<Target> open_target(const std::string& kind, const std::string& dapprof,
                                    const std::string& responder) {
  auto t = std::make_unique<Target>();
  t->name = kind;
  if (kind == "direct stdio") {
    t->children.push_back(spawn({responder}, true));
    t->conn.emplace(t->children[0]->from, t->children[0]->to);
  } else if (kind == "direct tcp") {
    t->children.push_back(spawn({responder, "--listen", "0"}, false));
    const std::string line = read_line(t->children[0]->from);
    t->socket = connect_tcp(std::atoi(line.substr(5).c_str()));
    t->conn.emplace(t->socket, t->socket);
  } else if (kind == "dapprof stdio") {
    t->children.push_back(spawn({dapprof, "stdio", "--log-level", "warn", "--", responder}, true));
    t->conn.emplace(t->children[0]->from, t->children[0]->to);
  } else if (kind == "dapprof serve") {
    const std::string port_file = fmt::format("/tmp/adapter_bench.{}.port", ::getpid());
    std::remove(port_file.c_str());
    t->children.push_back(spawn({dapprof, "serve", "--listen", "127.0.0.1:0", "--port-file",
                                 port_file, "--log-level", "warn", "--", responder},
                                false));
    int port = 0;
    for (int i = 0; i < 250 && port == 0; ++i) {
      std::ifstream in(port_file);
      if (!(in >> port)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::remove(port_file.c_str());
    if (port == 0) die("dapprof serve did not write its port");
    t->socket = connect_tcp(port);
    t->conn.emplace(t->socket, t->socket);
  }
  return t;
}

struct Latency {
  double median_us = 0, p99_us = 0;
};

Latency round_trips(Conn& conn, int n) {
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(n));
  std::int64_t seq = 0;
  for (int i = 0; i < n + 500; ++i) {  // the first 500 warm up caches and the scheduler
    const auto t0 = Clock::now();
    conn.send({{"seq", ++seq}, {"type", "request"}, {"command", "threads"}});
    for (;;) {
      Json m = conn.recv();
      if (m.value("type", "") == "response" && m.value("request_seq", 0) == seq) break;
    }
    const auto t1 = Clock::now();
    if (i >= 500) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100]};
}

struct Throughput {
  double messages_per_s = 0, mb_per_s = 0;
};

Throughput flood(Conn& conn, int events) {
  const std::size_t before = conn.bytes();
  const auto t0 = Clock::now();
  conn.send({{"seq", 1000000},
             {"type", "request"},
             {"command", "flood"},
             {"arguments", {{"count", events}, {"size", 80}}}});
  int seen = 0;
  for (;;) {
    Json m = conn.recv();
    if (m.value("type", "") == "event") ++seen;
    if (m.value("type", "") == "response" && m.value("command", "") == "flood") break;
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (seen != events) die(fmt::format("expected {} events, got {}", events, seen));
  return {events / s, static_cast<double>(conn.bytes() - before) / s / 1e6};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) die("usage: adapter_bench DAPPROF RESPONDER [requests] [events]");
  ::signal(SIGPIPE, SIG_IGN);
  const std::string dapprof = argv[1], responder = argv[2];
  const int requests = argc > 3 ? std::atoi(argv[3]) : 10000;
  const int events = argc > 4 ? std::atoi(argv[4]) : 100000;

  fmt::print("Round trip of {} requests to a responder that answers at once (µs)\n", requests);
  fmt::print("{:<16} {:>10} {:>10} {:>14}\n", "path", "median", "p99", "added median");
  Latency base_pipe{}, base_tcp{};
  for (const char* kind : {"direct stdio", "dapprof stdio", "direct tcp", "dapprof serve"}) {
    auto t = open_target(kind, dapprof, responder);
    const Latency l = round_trips(*t->conn, requests);
    const std::string k = kind;
    if (k == "direct stdio") base_pipe = l;
    if (k == "direct tcp") base_tcp = l;
    const Latency& base = k == "dapprof serve" || k == "direct tcp" ? base_tcp : base_pipe;
    fmt::print("{:<16} {:>10.1f} {:>10.1f} {:>14}\n", kind, l.median_us, l.p99_us,
               k.rfind("dapprof", 0) == 0 ? fmt::format("{:+.1f}", l.median_us - base.median_us)
                                          : std::string("-"));
  }
  fmt::print(
      "(dapprof serve: client->dapprof over TCP, dapprof->responder over pipes; compared "
      "with direct tcp)\n\n");

  fmt::print("Throughput: {} output events (80-character text) to a client reading flat out\n",
             events);
  fmt::print("{:<16} {:>14} {:>10}\n", "path", "messages/s", "MB/s");
  for (const char* kind : {"direct stdio", "dapprof stdio", "direct tcp", "dapprof serve"}) {
    auto t = open_target(kind, dapprof, responder);
    const Throughput r = flood(*t->conn, events);
    fmt::print("{:<16} {:>14.0f} {:>10.1f}\n", kind, r.messages_per_s, r.mb_per_s);
  }
  return 0;
}
