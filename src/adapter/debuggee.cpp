#include "adapter/debuggee.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <set>

#include "sampler/process/pid_namespace.hpp"
#include "sampler/process/socket_peer.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::adapter {
namespace {

namespace proc = sampler::process;

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// The processes at the other end of the connection.
std::vector<pid_t> peer_processes(const UpstreamPeer& peer) {
  if (peer.child > 0) {
    auto out = proc::descendants(peer.child);
    out.push_back(peer.child);
    return out;
  }
  if (peer.local && peer.remote) return proc::tcp_peer_processes(*peer.local, *peer.remote);
  return {};
}

std::string what_to_do() {
  return "Where the program runs in another PID namespace (a container), run dapprof inside the "
         "container, or name the program's PID on this machine with \"processId\" in "
         "startProfiling (`dapprof ps` shows it beside its PID in the container).";
}

Error refuse(const ReportedDebuggee& reported, const std::string& why) {
  return Error{fmt::format("Cannot tell which process of this machine is the debuggee debugpy "
                           "names (process {} running '{}'): {}. {}",
                           reported.pid, reported.name, why, what_to_do()),
               ErrorCode::NoSuchProcess};
}

}  // namespace

bool runs_program(const std::vector<std::string>& argv, const std::string& name) {
  if (name.empty() || argv.empty()) return false;
  const std::string base = base_name(name);
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == name || (!base.empty() && base_name(argv[i]) == base)) return true;
    // -m pkg.mod: sys.argv[0] is the module's file, .../pkg/mod.py or .../pkg/mod/__main__.py.
    if (argv[i] == "-m" && i + 1 < argv.size()) {
      std::string path = argv[i + 1];
      std::replace(path.begin(), path.end(), '.', '/');
      if (name.ends_with("/" + path + ".py") || name.ends_with("/" + path + "/__main__.py") ||
          name == path + ".py" || name == path + "/__main__.py")
        return true;
    }
  }
  return false;
}

Result<pid_t> resolve_debuggee(const ReportedDebuggee& reported, const UpstreamPeer& peer) {
  if (peer.host_pids) return reported.pid;
  const auto ours = proc::pid_namespace(::getpid());
  std::set<std::uint64_t> namespaces;
  const auto peers = peer_processes(peer);
  for (const pid_t p : peers)
    if (const auto ns = proc::pid_namespace(p)) namespaces.insert(*ns);
  // A launched adapter's own descendant (its launcher's program) is the session's whatever name
  // debugpy gives it (its launch configuration's processName, the interpreter's path by default).
  // So is, at the other end of a TCP connection, the process connected to that adapter (the
  // program may have changed the sys.argv[0] debugpy names it by). Not any ancestor of the
  // peer, although debugpy.listen() runs the adapter as the program's child: through a port
  // forwarder, the peer's ancestors are this machine's init and the forwarder's parents, whose
  // PIDs are those a container's program most often has.
  const auto session_owns = [&](pid_t host) {
    if (peer.child > 0) return std::find(peers.begin(), peers.end(), host) != peers.end();
    return std::any_of(peers.begin(), peers.end(),
                       [&](pid_t p) { return p == host || proc::tcp_connected(host, p); });
  };
  const bool foreign = std::any_of(namespaces.begin(), namespaces.end(),
                                   [&](std::uint64_t ns) { return ns != ours; });
  // The peer unknown (another user's, another network namespace, a port forwarder): only a
  // process of dapprof's own namespace running the program can be it.
  if (namespaces.empty() && ours) namespaces.insert(*ours);
  std::vector<pid_t> found, other_programs;
  for (const std::uint64_t ns : namespaces) {
    std::vector<pid_t> hosts;
    if (ns == ours) {
      // Another user's process does not show its namespace: it is taken as one of dapprof's
      // own if it runs the program (checked below), and the attach then says what permission
      // it lacks.
      const auto its = proc::pid_namespace(reported.pid);
      if (its == ours || (!its && std::filesystem::exists("/proc/" + std::to_string(reported.pid))))
        hosts.push_back(reported.pid);
    } else {
      hosts = proc::find_in_namespace(ns, reported.pid);
    }
    for (const pid_t host : hosts) {
      const bool runs = session_owns(host) || runs_program(proc::command_line(host), reported.name);
      (runs ? found : other_programs).push_back(host);
    }
  }
  if (found.size() == 1) {
    if (found.front() != reported.pid)
      spdlog::info("debuggee {} of its PID namespace is process {} of this machine", reported.pid,
                   found.front());
    return found.front();
  }
  const std::string where =
      foreign         ? "it runs in another PID namespace than dapprof's (a container)"
      : peers.empty() ? "the process at the other end of the debug connection is not found "
                        "(another user's, or in another network namespace)"
                      : "the process at the other end of the debug connection is in dapprof's "
                        "PID namespace";
  if (found.size() > 1)
    return refuse(reported, fmt::format("{}, and processes {} could all be it", where,
                                        fmt::join(found, ", ")));
  if (!other_programs.empty())
    return refuse(
        reported,
        fmt::format("{}, and process {} there runs another program ('{}')", where, reported.pid,
                    fmt::join(proc::command_line(other_programs.front()), " ")));
  return refuse(reported, fmt::format("{}, and it has no process {} that this user can read", where,
                                      reported.pid));
}

Result<pid_t> check_named_debuggee(pid_t host, const ReportedDebuggee& reported) {
  const auto ids = proc::namespace_pids(host);
  if (ids.empty())
    return Error{fmt::format("\"processId\" names process {}, which does not exist.", host),
                 ErrorCode::NoSuchProcess};
  if (ids.back() != reported.pid)
    return Error{fmt::format("\"processId\" names process {}, which is not the debuggee: debugpy "
                             "names process {} of the program's PID namespace, and process {} is "
                             "{} in its own.",
                             host, reported.pid, host, ids.back()),
                 ErrorCode::NoSuchProcess};
  if (!runs_program(proc::command_line(host), reported.name))
    return Error{fmt::format("\"processId\" names process {}, which is not the debuggee: it does "
                             "not run '{}', the program debugpy names.",
                             host, reported.name),
                 ErrorCode::NoSuchProcess};
  return host;
}

}  // namespace dapprof::adapter
