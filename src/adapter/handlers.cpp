#include "adapter/handlers.hpp"

#include <spdlog/spdlog.h>

#include <unordered_map>

#include "adapter/envelope.hpp"
#include "adapter/session.hpp"

namespace dapprof::adapter {
namespace {

// body.error.id values shared with the profiling protocol's error table.
constexpr int kErrorInternal = 2000;
constexpr int kErrorNoDebuggee = 2002;
constexpr int kErrorAlreadyProfiling = 2003;
constexpr int kErrorNotProfiling = 2004;

Disposition start_profiling(Session& session, Json& request) {
  if (session.debuggee() <= 0) {
    session.respond_error(request,
                          "no debuggee yet: startProfiling needs the debugged process, which the "
                          "debug adapter announces with its `process` event once launch or "
                          "attach has completed; send startProfiling after that event",
                          kErrorNoDebuggee);
  } else if (session.profiling()) {
    session.respond_error(request,
                          "already profiling this debuggee: send stopProfiling before starting "
                          "again",
                          kErrorAlreadyProfiling);
  } else {
    auto started = session.profiler().start(object_field(request, "arguments"), session.debuggee(),
                                            session.event_sink());
    if (started) {
      session.set_profiling(true);
      session.respond(request, std::move(*started));
    } else {
      session.respond_error(request, started.message(), kErrorInternal);
    }
  }
  return Disposition::Consume;
}

Disposition stop_profiling(Session& session, Json& request) {
  if (!session.profiling()) {
    session.respond_error(request, "not profiling: send startProfiling first", kErrorNotProfiling);
    return Disposition::Consume;
  }
  session.set_profiling(false);
  auto stopped = session.profiler().stop(object_field(request, "arguments"));
  if (stopped)
    session.respond(request, std::move(*stopped));
  else
    session.respond_error(request, stopped.message(), kErrorInternal);
  return Disposition::Consume;
}

Disposition disconnect_request(Session& session, Json&) {
  session.note_disconnect_requested();
  return Disposition::Forward;
}

Disposition initialize_response(Session&, Json& response) {
  auto it = response.find("body");
  if (it == response.end() || !it->is_object()) {
    if (response.contains("success") && response["success"] == false) return Disposition::Forward;
    response["body"] = Json::object();
    it = response.find("body");
  }
  (*it)["supportsProfiling"] = true;
  return Disposition::Forward;
}

// The stdio debugpy adapter exits only when its stdin closes, which ends the session.
Disposition disconnect_response(Session&, Json&) { return Disposition::ForwardThenCloseUpstream; }

Disposition process_event(Session& session, Json& event) {
  if (auto pid = integer_field(object_field(event, "body"), "systemProcessId"); pid && *pid > 0) {
    spdlog::info("session {}: debuggee is pid {}", session.id(), *pid);
    session.set_debuggee(static_cast<pid_t>(*pid));
  }
  return Disposition::Forward;
}

Disposition terminated_event(Session& session, Json&) {
  session.note_terminated_sent();
  return Disposition::Forward;
}

using Table = std::unordered_map<std::string_view, Handler>;

Handler find(const Table& table, std::string_view key) {
  const auto it = table.find(key);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace

Handler find_client_request_handler(std::string_view command) {
  static const Table table{{"startProfiling", &start_profiling},
                           {"stopProfiling", &stop_profiling},
                           {"disconnect", &disconnect_request}};
  return find(table, command);
}

Handler find_upstream_response_handler(std::string_view command) {
  static const Table table{{"initialize", &initialize_response},
                           {"disconnect", &disconnect_response}};
  return find(table, command);
}

Handler find_upstream_event_handler(std::string_view event) {
  static const Table table{{"process", &process_event}, {"terminated", &terminated_event}};
  return find(table, event);
}

}  // namespace dapprof::adapter
