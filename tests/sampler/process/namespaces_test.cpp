// PID namespaces and socket peers from /proc, against real processes: one in a PID namespace of
// its own (as in a container) with threads, and one listening on loopback.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "sampler/process/namespace_tids.hpp"
#include "sampler/process/pid_namespace.hpp"
#include "sampler/process/socket_peer.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::sampler::process {
namespace {

// A process forked into a new PID namespace, where it is pid 1 and starts `threads` threads that
// sleep; killed (with its namespace) when destroyed.
class Contained {
 public:
  explicit Contained(int threads) {
    int ready[2];
    if (::pipe(ready) != 0) return;
    const pid_t outer = ::fork();
    if (outer == 0) {
      ::close(ready[0]);
      if (::unshare(CLONE_NEWPID) != 0) ::_exit(3);
      const pid_t inner = ::fork();  // pid 1 of the new namespace
      if (inner == 0) {
        for (int i = 0; i < threads; ++i) std::thread([] { ::pause(); }).detach();
        // Tell the test the threads exist: the host pid of this process is the outer one's child.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const char ok = 1;
        if (::write(ready[1], &ok, 1) != 1) ::_exit(4);
        ::pause();
        ::_exit(0);
      }
      int status = 0;
      ::waitpid(inner, &status, 0);
      ::_exit(0);
    }
    ::close(ready[1]);
    outer_ = outer;
    char ok = 0;
    if (::read(ready[0], &ok, 1) == 1) {
      const auto kids = descendants(outer);
      if (kids.size() == 1) pid_ = kids.front();
    }
    ::close(ready[0]);
  }
  ~Contained() {
    if (pid_ > 0) ::kill(pid_, SIGKILL);  // pid 1: its namespace ends with it
    if (outer_ > 0) ::waitpid(outer_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t outer_ = 0;
  pid_t pid_ = 0;
};

TEST(PidNamespace, OwnProcessIsInProcsNamespace) {
  EXPECT_EQ(namespace_pids(::getpid()), std::vector<pid_t>{::getpid()});
  EXPECT_EQ(innermost_pid(::getpid()), ::getpid());
  NamespaceTids tids(::getpid());
  EXPECT_FALSE(tids.nested());
  EXPECT_EQ(tids.host(12345), 12345);  // no cost, no question asked
  EXPECT_TRUE(pid_namespace(::getpid()).has_value());
}

TEST(PidNamespace, ThreadsOfAContainedProcessMapToTheHostsTids) {
  Contained box(2);
  if (box.pid() <= 0) GTEST_SKIP() << "cannot make a PID namespace here (needs CAP_SYS_ADMIN)";
  const auto ids = namespace_pids(box.pid());
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids.front(), box.pid());
  EXPECT_EQ(ids.back(), 1);
  EXPECT_NE(pid_namespace(box.pid()), pid_namespace(::getpid()));
  EXPECT_EQ(find_in_namespace(*pid_namespace(box.pid()), 1), std::vector<pid_t>{box.pid()});
  // The same number in this namespace is another process (this machine's init, if any).
  EXPECT_EQ(find_in_namespace(*pid_namespace(box.pid()), 2), std::vector<pid_t>{});

  NamespaceTids tids(box.pid());
  ASSERT_TRUE(tids.nested());
  auto host = list_threads(box.pid());
  ASSERT_TRUE(host) << host.message();
  ASSERT_EQ(host->size(), 3u);
  std::vector<pid_t> inner;
  for (const pid_t tid : *host) {
    const pid_t in = tids.inner(tid);
    ASSERT_GT(in, 0) << tid;
    EXPECT_EQ(tids.host(in), tid);
    EXPECT_EQ(namespace_pids(box.pid(), tid).back(), in);
    inner.push_back(in);
  }
  std::sort(inner.begin(), inner.end());
  EXPECT_EQ(inner, (std::vector<pid_t>{1, 2, 3}));
  EXPECT_EQ(tids.host(1), box.pid());
  EXPECT_EQ(tids.host(77), 0);  // no such thread in there
}

TEST(SocketPeer, FindsTheProcessAtTheOtherEndOfALoopbackConnection) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size), 0);
  const pid_t server = ::fork();
  if (server == 0) {
    const int accepted = ::accept(listener, nullptr, nullptr);
    char byte;
    while (::read(accepted, &byte, 1) > 0) {
    }
    ::_exit(0);
  }
  ::close(listener);  // only the server holds it now
  const int connection = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(::connect(connection, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  sockaddr_storage local{}, remote{};
  socklen_t local_size = sizeof local, remote_size = sizeof remote;
  ASSERT_EQ(::getsockname(connection, reinterpret_cast<sockaddr*>(&local), &local_size), 0);
  ASSERT_EQ(::getpeername(connection, reinterpret_cast<sockaddr*>(&remote), &remote_size), 0);
  // accept() may not have run yet: the connection is established either way, but the socket is
  // held by the server's process only once accepted.
  std::vector<pid_t> peers;
  for (int i = 0; i < 200 && peers.empty(); ++i) {
    peers = tcp_peer_processes(local, remote);
    if (peers.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(peers, std::vector<pid_t>{server});
  // Swapped ends name this process's own socket, which is never reported.
  EXPECT_EQ(tcp_peer_processes(remote, local), std::vector<pid_t>{});
  // Connected both ways; a process this one is not connected to (its parent) is not.
  EXPECT_TRUE(tcp_connected(::getpid(), server));
  EXPECT_TRUE(tcp_connected(server, ::getpid()));
  EXPECT_FALSE(tcp_connected(::getpid(), ::getppid()));
  ::close(connection);
  ::waitpid(server, nullptr, 0);
}

}  // namespace
}  // namespace dapprof::sampler::process
