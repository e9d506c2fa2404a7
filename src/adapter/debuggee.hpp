#pragma once
// Which process of this machine debugpy's `process` event names. debugpy reports the pid the
// program has in its own PID namespace: in a container, a number that on the host may be no
// process, or another program. It is resolved within the PID namespace of the process at the
// other end of the session's debug connection, and the command line found must run the program
// debugpy names; a process that cannot be told for certain is never sampled.
#include <sys/socket.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace dapprof::adapter {

// The other end of a session's debug connection.
struct UpstreamPeer {
  pid_t child = 0;  // a spawned adapter (or a wrapper that runs one): it and its descendants
  std::optional<sockaddr_storage> local, remote;  // a TCP connection's two ends
  bool host_pids = false;  // dapprof's own adapter (profile-only): its pids are this machine's
};

// debugpy's `process` event.
struct ReportedDebuggee {
  pid_t pid = 0;     // systemProcessId
  std::string name;  // the program's sys.argv[0]
};

// The host PID of the reported debuggee, or NoSuchProcess saying why it cannot be told and how
// to profile it anyway.
Result<pid_t> resolve_debuggee(const ReportedDebuggee& reported, const UpstreamPeer& peer);
// startProfiling's `processId`: the host PID the user names must be the reported debuggee, as its
// own PID namespace knows it, running the program debugpy names.
Result<pid_t> check_named_debuggee(pid_t host, const ReportedDebuggee& reported);
// Whether a process with these arguments runs the program debugpy names `name` (its sys.argv[0]:
// the script's path as given, '-c', or a module's file for -m).
bool runs_program(const std::vector<std::string>& argv, const std::string& name);

}  // namespace dapprof::adapter
