#include "adapter/handlers.hpp"

#include <spdlog/spdlog.h>

#include <unordered_map>

#include "adapter/fields.hpp"
#include "adapter/session.hpp"
#include "protocol/envelope.hpp"
#include "protocol/messages.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::adapter {
namespace {

Disposition start_profiling(Session& session, Json& request) {
  auto arguments = protocol::StartProfilingArguments::parse(object_field(request, "arguments"));
  if (!arguments) {
    session.respond_error(request, protocol::from_error(arguments.error()));
  } else if (session.debuggee() <= 0) {
    session.respond_error(request, protocol::errors::no_debuggee());
  } else if (session.profiling()) {
    session.respond_error(request, protocol::errors::already_profiling(session.debuggee()));
  } else if (arguments->pid &&
             !sampler::process::in_process_tree(session.debuggee(), *arguments->pid)) {
    // Never read the memory of a process this session did not start or attach to.
    session.respond_error(request,
                          protocol::errors::not_in_session(*arguments->pid, session.debuggee()));
  } else {
    const pid_t target = arguments->pid.value_or(session.debuggee());
    auto started = session.profiler().start(*arguments, target, session.event_sink());
    if (started) {
      session.set_profiling(true);
      session.respond(request, std::move(*started));
    } else {
      session.respond_error(request, protocol::from_error(started.error()));
    }
  }
  return Disposition::Consume;
}

Disposition stop_profiling(Session& session, Json& request) {
  auto arguments = protocol::StopProfilingArguments::parse(object_field(request, "arguments"));
  if (!arguments) {
    session.respond_error(request, protocol::from_error(arguments.error()));
    return Disposition::Consume;
  }
  if (!session.profiling()) {
    session.respond_error(request, protocol::errors::not_profiling());
    return Disposition::Consume;
  }
  session.set_profiling(false);
  auto stopped = session.profiler().stop(*arguments);
  if (stopped)
    session.respond(request, std::move(*stopped));
  else
    session.respond_error(request, protocol::from_error(stopped.error()));
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
