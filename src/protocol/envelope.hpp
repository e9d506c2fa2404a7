#pragma once
// DAP envelopes for the profiling extension: responses (success or error) and events. `seq` is
// left at 0 for the session to number outgoing messages.
#include <sys/types.h>

#include <string>
#include <string_view>

#include "common/result.hpp"
#include "protocol/generated/messages.hpp"  // ProfilingErrorId, from schemas/
#include "protocol/json.hpp"

namespace dapprof::protocol {

struct ProtocolError {
  ProfilingErrorId id = ProfilingErrorId::Internal;
  std::string message;  // for a person: what happened and what to do
};

// Maps a sampler or argument error to its id, keeping its message: the sampler's permission
// errors already say their cause and its fix (sampler/process/permissions), which only it knows.
ProtocolError from_error(const Error& error);

// The errors the session itself detects, worded once.
namespace errors {
// `action` completes "Cannot ..." and "..., then ...": what the request would have done.
ProtocolError no_debuggee(std::string_view action = "start profiling");
ProtocolError already_profiling(pid_t pid);
ProtocolError not_profiling();
// `done` completes "... can be ...": what the request does to a process.
ProtocolError not_in_session(pid_t pid, pid_t debuggee, std::string_view done = "profiled");
ProtocolError output_failed(std::string_view path, std::string_view detail);
ProtocolError no_profile();
}  // namespace errors

// {"seq":0,"type":"response","request_seq":…,"success":true,"command":…,"body":…}
Json make_response(const Json& request, Json body = Json::object());
// success false; `message` and body.error.format carry the same text, body.error.id the id.
Json make_error_response(const Json& request, const ProtocolError& error);
// {"seq":0,"type":"event","event":…,"body":…}
Json make_event(std::string_view event, Json body);

}  // namespace dapprof::protocol
