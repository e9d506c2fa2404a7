#include "adapter/handlers.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <climits>
#include <unordered_map>

#include "adapter/child_sessions.hpp"
#include "adapter/debuggee.hpp"
#include "adapter/fields.hpp"
#include "adapter/session.hpp"
#include "protocol/envelope.hpp"
#include "protocol/messages.hpp"
#include "protocol/sampling.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::adapter {
namespace {

Disposition start_profiling(Session& session, Json& request) {
  auto arguments = protocol::StartProfilingArguments::parse(member(request, "arguments"));
  if (!arguments) {
    session.respond_error(request, protocol::from_error(arguments.error()));
    return Disposition::Consume;
  }
  if (auto settings = protocol::sampling_settings(*arguments); !settings) {
    session.respond_error(request, protocol::from_error(settings.error()));
    return Disposition::Consume;
  }
  if (session.debuggee().pid <= 0) {
    session.respond_error(request, protocol::errors::no_debuggee());
    return Disposition::Consume;
  }
  // The process debugpy names, on this machine (it may name it by its PID in a container).
  const auto debuggee =
      arguments->process_id
          ? check_named_debuggee(static_cast<pid_t>(*arguments->process_id), session.debuggee())
          : session.debuggee_process();
  if (!debuggee) {
    session.respond_error(request, protocol::from_error(debuggee.error()));
  } else if (arguments->pid && !sampler::process::in_process_tree(*debuggee, *arguments->pid)) {
    // Never read the memory of a process this session did not start or attach to.
    session.respond_error(request, protocol::errors::not_in_session(*arguments->pid, *debuggee));
  } else {
    const pid_t target = arguments->pid.value_or(*debuggee);
    session.profiling().start(std::move(request), *arguments, target);
  }
  return Disposition::Consume;
}

Disposition stop_profiling(Session& session, Json& request) {
  auto arguments = protocol::StopProfilingArguments::parse(member(request, "arguments"));
  if (!arguments) {
    session.respond_error(request, protocol::from_error(arguments.error()));
    return Disposition::Consume;
  }
  session.profiling().stop(std::move(request), *arguments);
  return Disposition::Consume;
}

Disposition export_profile(Session& session, Json& request) {
  auto arguments = protocol::ExportProfileArguments::parse(member(request, "arguments"));
  if (!arguments) {
    session.respond_error(request, protocol::from_error(arguments.error()));
  } else {
    session.profiling().export_profile(request, *arguments);
  }
  return Disposition::Consume;
}

Disposition async_tasks(Session& session, Json& request) {
  constexpr std::string_view kAction = "read the asyncio tasks";
  auto arguments = protocol::AsyncTasksArguments::parse(member(request, "arguments"));
  if (!arguments) {
    session.respond_error(request, protocol::from_error(arguments.error()));
    return Disposition::Consume;
  }
  if (session.debuggee().pid <= 0) {
    session.respond_error(request, protocol::errors::no_debuggee(kAction));
    return Disposition::Consume;
  }
  const auto debuggee = session.debuggee_process();
  if (!debuggee) {
    session.respond_error(request, protocol::from_error(debuggee.error()));
  } else if (arguments->pid && !sampler::process::in_process_tree(*debuggee, *arguments->pid)) {
    // As startProfiling: never read a process this session did not start or attach to.
    session.respond_error(request,
                          protocol::errors::not_in_session(*arguments->pid, *debuggee, "read"));
  } else {
    session.task_reads().read(std::move(request), arguments->pid.value_or(*debuggee));
  }
  return Disposition::Consume;
}

Disposition disconnect_request(Session& session, Json&) {
  session.note_disconnect_requested();
  session.profiling().end(protocol::StoppedReason::Disconnected);
  return Disposition::Forward;
}

Disposition initialize_response(Session&, Json& response) {
  auto it = response.find("body");
  if (it == response.end() || !it->is_object()) {
    if (response.contains("success") && response["success"] == false) return Disposition::Forward;
    response["body"] = Json::object();
    it = response.find("body");
  }
  (*it)[std::string(protocol::kSupportsProfiling)] = true;
  (*it)[std::string(protocol::kSupportsProfilingStacks)] = true;
  return Disposition::Forward;
}

// The stdio debugpy adapter exits only when its stdin closes, which ends the session.
Disposition disconnect_response(Session&, Json&) { return Disposition::ForwardThenCloseUpstream; }

Disposition process_event(Session& session, Json& event) {
  const Json& body = object_field(event, "body");
  if (auto pid = integer_field(body, "systemProcessId"); pid && *pid > 0 && *pid <= INT32_MAX) {
    std::string name(string_field(body, "name"));
    spdlog::info("session {}: debuggee is pid {} ('{}', in its own PID namespace)", session.id(),
                 *pid, name);
    session.set_debuggee({static_cast<pid_t>(*pid), std::move(name)});
  }
  return Disposition::Forward;
}

Disposition terminated_event(Session& session, Json&) {
  session.note_terminated_sent();
  return Disposition::Forward;
}

// debugpy names a port of its own adapter for the child's session; the client must attach through
// dapprof instead, or the child could not be profiled.
Disposition debugpy_attach_event(Session& session, Json& event) {
  auto body = event.find("body");
  if (body == event.end() || !body->is_object()) return Disposition::Forward;
  if (auto redirected = session.child_sessions().redirect(*body); !redirected) {
    const auto child = integer_field(*body, "subProcessId").value_or(0);
    spdlog::warn("session {}: debugpyAttach for child process {} passed on unchanged: {}",
                 session.id(), child, redirected.message());
    session.send_to_client(protocol::make_event(
        "output", Json{{"category", "console"},
                       {"output", fmt::format("dapprof: child process {} cannot be profiled: {}\n",
                                              child, redirected.message())}}));
  }
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
                           {"exportProfile", &export_profile},
                           {"asyncTasks", &async_tasks},
                           {"disconnect", &disconnect_request}};
  return find(table, command);
}

Handler find_upstream_response_handler(std::string_view command) {
  static const Table table{{"initialize", &initialize_response},
                           {"disconnect", &disconnect_response}};
  return find(table, command);
}

Handler find_upstream_event_handler(std::string_view event) {
  static const Table table{{"process", &process_event},
                           {"terminated", &terminated_event},
                           {"debugpyAttach", &debugpy_attach_event}};
  return find(table, event);
}

}  // namespace dapprof::adapter
