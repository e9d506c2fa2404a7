#pragma once
// A debug adapter without a debugger, for profiling alone (`dapprof stdio --profile-only`): it
// takes the place of debugpy behind the session, so that everything the session does for a
// debugged program (the profiling requests, the process event that names the target, the end
// of the session) works unchanged. `launch` starts a Python program, `attach` names a running
// Python process; either then runs untouched (no breakpoints, no pausing) while the session
// profiles it. It talks DAP over one end of a socket pair; the session holds the other.
//
//   Configuring --launch/attach--> Running --exit--> Exited (exited, terminated)
//        \--disconnect--> Closed     \--disconnect: a launched program is terminated,
//                                       an attached one left running
#include <asio.hpp>
#include <memory>
#include <string>

#include "adapter/child.hpp"
#include "adapter/upstream.hpp"

namespace dapprof::adapter::profile_only {

// The upstream of a profile-only session: the adapter, on the session's strand. `python` runs
// programs whose launch configuration names none.
UpstreamConnector make_connector(Reaper& reaper, std::size_t max_message_size, std::string python);

}  // namespace dapprof::adapter::profile_only
