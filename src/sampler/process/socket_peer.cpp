#include "sampler/process/socket_peer.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "sampler/process/procfs.hpp"

namespace dapprof::sampler::process {
namespace {

// An address as /proc/net/tcp writes it: the address's 32-bit words each in the machine's byte
// order, in hex, then ':' and the port: 127.0.0.1:8080 is "0100007F:1F90" on x86-64.
std::optional<std::string> proc_net_form(const sockaddr_storage& a) {
  const unsigned char* bytes = nullptr;
  std::size_t size = 0;
  std::uint16_t port = 0;
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    bytes = reinterpret_cast<const unsigned char*>(&in.sin_addr);
    size = 4;
    port = ntohs(in.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
    bytes = reinterpret_cast<const unsigned char*>(&in6.sin6_addr);
    size = 16;
    port = ntohs(in6.sin6_port);
  } else {
    return std::nullopt;
  }
  std::string out;
  for (std::size_t word = 0; word < size; word += 4) {
    std::uint32_t v = 0;
    std::memcpy(&v, bytes + word, 4);  // the word as the kernel holds it, printed with %08X
    out += fmt::format("{:08X}", v);
  }
  return out + fmt::format(":{:04X}", port);
}

// The inode of the socket in `table` (/proc/net/tcp or tcp6) from `local` to `remote`.
std::optional<std::string> socket_inode(const std::string& table, const std::string& local,
                                        const std::string& remote) {
  const auto text = read_proc_file(table);
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    // sl local rem st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
    std::istringstream fields(line);
    std::string sl, here, there, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> sl >> here >> there >> state >> queues >> timer >> retransmits >> uid >> timeout >>
        inode;
    if (here == local && there == remote && !inode.empty() && inode != "0") return inode;
  }
  return std::nullopt;
}

// The inodes of the sockets `pid` has open ("socket:[N]" -> "N").
std::set<std::string> socket_inodes(pid_t pid) {
  std::set<std::string> out;
  const std::string dir = fmt::format("/proc/{}/fd", pid);
  const auto fds = list_directory(dir);
  if (!fds) return out;
  for (const auto& fd : *fds) {
    char target[64];
    const auto path = fmt::format("{}/{}", dir, fd);
    const ssize_t n = ::readlink(path.c_str(), target, sizeof target);
    const std::string_view link(target, n > 0 ? static_cast<std::size_t>(n) : 0);
    if (link.starts_with("socket:[") && link.ends_with("]"))
      out.emplace(link.substr(8, link.size() - 9));
  }
  return out;
}

// The TCP sockets of `pid`'s network namespace: inode -> (local, remote), as /proc/net/tcp writes
// them.
std::map<std::string, std::pair<std::string, std::string>> tcp_sockets(pid_t pid) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const char* table : {"tcp", "tcp6"}) {
    const auto text = read_proc_file(fmt::format("/proc/{}/net/{}", pid, table));
    if (!text) continue;
    std::istringstream lines(*text);
    std::string line;
    std::getline(lines, line);  // the header
    while (std::getline(lines, line)) {
      std::istringstream fields(line);
      std::string sl, here, there, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> sl >> here >> there >> state >> queues >> timer >> retransmits >> uid >> timeout >>
          inode;
      if (!inode.empty() && inode != "0") out[inode] = {here, there};
    }
  }
  return out;
}

}  // namespace

bool tcp_connected(pid_t a, pid_t b) {
  const auto mine = socket_inodes(a);
  const auto theirs = socket_inodes(b);
  if (mine.empty() || theirs.empty()) return false;
  const auto sockets = tcp_sockets(a);
  std::set<std::pair<std::string, std::string>> their_ends;
  for (const auto& [inode, ends] : sockets)
    if (theirs.contains(inode)) their_ends.insert(ends);
  for (const auto& [inode, ends] : sockets)
    if (mine.contains(inode) && their_ends.contains({ends.second, ends.first})) return true;
  return false;
}

std::vector<pid_t> tcp_peer_processes(const sockaddr_storage& local,
                                      const sockaddr_storage& remote) {
  std::vector<pid_t> out;
  const auto ours = proc_net_form(local);
  const auto theirs = proc_net_form(remote);
  if (!ours || !theirs) return out;
  // Their socket: local address ours' remote one.
  const auto inode = socket_inode(local.ss_family == AF_INET6 ? "/proc/net/tcp6" : "/proc/net/tcp",
                                  *theirs, *ours);
  if (!inode) return out;
  const std::string wanted = fmt::format("socket:[{}]", *inode);
  const pid_t self = ::getpid();
  for (const pid_t pid : proc_pids()) {
    if (pid == self) continue;
    const std::string dir = fmt::format("/proc/{}/fd", pid);
    const auto fds = list_directory(dir);
    if (!fds) continue;  // another user's, or gone
    for (const auto& fd : *fds) {
      char target[64];
      const auto path = fmt::format("{}/{}", dir, fd);
      const ssize_t n = ::readlink(path.c_str(), target, sizeof target);
      if (n > 0 && std::string_view(target, static_cast<std::size_t>(n)) == wanted) {
        out.push_back(pid);
        break;
      }
    }
  }
  return out;
}

}  // namespace dapprof::sampler::process
