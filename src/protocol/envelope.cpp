#include "protocol/envelope.hpp"

#include <fmt/format.h>

namespace dapprof::protocol {
namespace {

ProfilingErrorId id_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument:
      return ProfilingErrorId::InvalidArguments;
    case ErrorCode::NoSuchProcess:
      return ProfilingErrorId::NoSuchProcess;
    case ErrorCode::ProcessExited:
      return ProfilingErrorId::ProcessExited;
    case ErrorCode::PermissionDenied:
      return ProfilingErrorId::PermissionDenied;
    case ErrorCode::NotPython:
      return ProfilingErrorId::NotPython;
    case ErrorCode::UnsupportedVersion:
      return ProfilingErrorId::UnsupportedVersion;
    case ErrorCode::OutputFailed:
      return ProfilingErrorId::OutputFailed;
    case ErrorCode::Generic:
    case ErrorCode::TornRead:
      return ProfilingErrorId::Internal;
  }
  return ProfilingErrorId::Internal;
}

// The request came from the peer: copy its seq and command only if they have the right type.
Json member_or(const Json& request, const char* key, bool (Json::*is_type)() const noexcept,
               Json fallback) {
  if (!request.is_object()) return fallback;
  const auto it = request.find(key);
  return it != request.end() && ((*it).*is_type)() ? *it : fallback;
}

}  // namespace

ProtocolError from_error(const Error& error) { return {id_of(error.code), error.message}; }

namespace errors {

ProtocolError no_debuggee(std::string_view action) {
  return {ProfilingErrorId::NoDebuggee,
          fmt::format("Cannot {0}: there is no debuggee yet. Launch or attach to a Python program "
                      "first, then {0}.",
                      action)};
}

ProtocolError already_profiling(pid_t pid) {
  return {ProfilingErrorId::AlreadyProfiling,
          fmt::format("Process {} is already being profiled; stop that profiling first.", pid)};
}

ProtocolError not_profiling() {
  return {ProfilingErrorId::NotProfiling,
          "Cannot stop profiling: profiling is not running in this debug session."};
}

ProtocolError not_in_session(pid_t pid, pid_t debuggee, std::string_view done) {
  return {ProfilingErrorId::NoSuchProcess,
          fmt::format("Process {} is not part of this debug session: only the debuggee (process "
                      "{}) and its child processes can be {}.",
                      pid, debuggee, done)};
}

ProtocolError output_failed(std::string_view path, std::string_view detail) {
  return {
      ProfilingErrorId::OutputFailed,
      fmt::format("Could not write the profile to {}: {}. Choose a writable path.", path, detail)};
}

ProtocolError no_profile() {
  return {ProfilingErrorId::NoProfile,
          "There is no profile to export: no profiling run has started in this debug session "
          "since it began (or since the last one failed to start). Start profiling first."};
}

}  // namespace errors

Json make_response(const Json& request, Json body) {
  Json response = {{"seq", 0},
                   {"type", "response"},
                   {"request_seq", member_or(request, "seq", &Json::is_number_integer, 0)},
                   {"success", true},
                   {"command", member_or(request, "command", &Json::is_string, "")}};
  response["body"] = std::move(body);
  return response;
}

Json make_error_response(const Json& request, const ProtocolError& error) {
  Json response = make_response(request);
  response["success"] = false;
  response.erase("body");  // so that `message` comes before `body`, as DAP lists them
  response["message"] = error.message;
  response["body"] = {
      {"error",
       {{"id", static_cast<int>(error.id)}, {"format", error.message}, {"showUser", true}}}};
  return response;
}

Json make_event(std::string_view event, Json body) {
  Json message = {{"seq", 0}, {"type", "event"}, {"event", event}};
  message["body"] = std::move(body);
  return message;
}

}  // namespace dapprof::protocol
