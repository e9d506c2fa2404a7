#pragma once
// The messages dapprof owns or looks at, one small handler each, looked up by command or event
// name (lldb-dap style). Everything not in these tables passes through untouched.
#include <string_view>

#include "protocol/json.hpp"

namespace dapprof::adapter {

class Session;
using protocol::Json;

enum class Disposition {
  Forward,                  // pass on (possibly modified)
  Consume,                  // dapprof answered it; never forwarded
  ForwardThenCloseUpstream  // pass on, then close the upstream's input (after `disconnect`)
};

using Handler = Disposition (*)(Session& session, Json& message);

// Requests from the client, by command.
Handler find_client_request_handler(std::string_view command);
// Responses from the debug adapter, by command.
Handler find_upstream_response_handler(std::string_view command);
// Events from the debug adapter, by event name.
Handler find_upstream_event_handler(std::string_view event);

}  // namespace dapprof::adapter
