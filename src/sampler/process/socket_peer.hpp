#pragma once
// Which processes hold the other end of a TCP connection made on this machine: the connection's
// peer socket in /proc/net/tcp (tcp6), by its inode, among the open files of /proc/*/fd.
#include <sys/socket.h>
#include <sys/types.h>

#include <vector>

namespace dapprof::sampler::process {

// The processes other than this one that hold the socket whose local address is `remote` and
// whose remote address is `local` (the two ends of one of this process's connections, as
// getsockname and getpeername give them). Empty if the peer is in another network namespace, or
// belongs to a user whose files this one cannot list.
std::vector<pid_t> tcp_peer_processes(const sockaddr_storage& local,
                                      const sockaddr_storage& remote);

// Whether process `a` holds a TCP socket whose other end process `b` holds (both in a's network
// namespace): debugpy's adapter and the program it debugs, connected while a session lasts.
// False where either's open files cannot be listed (another user's).
bool tcp_connected(pid_t a, pid_t b);

}  // namespace dapprof::sampler::process
