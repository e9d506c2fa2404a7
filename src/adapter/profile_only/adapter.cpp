#include "adapter/profile_only/adapter.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "adapter/fields.hpp"
#include "adapter/profile_only/arguments.hpp"
#include "adapter/profile_only/process_watch.hpp"
#include "adapter/profile_only/program.hpp"
#include "protocol/envelope.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::adapter::profile_only {
namespace {

// Above this many bytes of the program's output waiting for the session, its pipes are read no
// further until they have gone: the program waits, memory does not grow.
constexpr std::size_t kOutputHighWater = 1u << 20;

enum class State { Configuring, Running, Exited, Closed };

class Adapter : public std::enable_shared_from_this<Adapter> {
 public:
  Adapter(Channel::Executor strand, Reaper& reaper, std::string python)
      : strand_(strand), reaper_(reaper), python_(std::move(python)) {}

  void start(std::shared_ptr<Channel> channel) {
    channel_ = std::move(channel);
    auto self = shared_from_this();
    channel_->start([self](Json&& m) { self->on_message(m); },
                    [self](const std::string& error) { self->on_closed(error); });
    channel_->on_drained([weak = weak_from_this()] {
      if (auto s = weak.lock(); s && s->program_) s->program_->resume_output();
    });
  }

 private:
  using Handler = void (Adapter::*)(const Json& request);

  void on_message(const Json& message) {
    if (string_field(message, "type") != "request") return;
    static const std::unordered_map<std::string_view, Handler> handlers{
        {"initialize", &Adapter::initialize},
        {"launch", &Adapter::launch},
        {"attach", &Adapter::attach},
        {"configurationDone", &Adapter::acknowledge},
        {"setExceptionBreakpoints", &Adapter::acknowledge},
        {"setBreakpoints", &Adapter::set_breakpoints},
        {"setFunctionBreakpoints", &Adapter::set_breakpoints},
        {"threads", &Adapter::threads},
        {"terminate", &Adapter::terminate},
        {"disconnect", &Adapter::disconnect}};
    const auto it = handlers.find(string_field(message, "command"));
    if (it == handlers.end()) return unsupported(message);
    (this->*(it->second))(message);
  }

  void initialize(const Json& request) {
    respond(request,
            Json{{"supportsConfigurationDoneRequest", true}, {"supportsTerminateRequest", true}});
    send_event("initialized", Json::object());
  }

  void launch(const Json& request) {
    if (!configuring(request)) return;
    auto spec = parse_launch(object_field(request, "arguments"), python_);
    if (!spec) return fail(request, spec.error());
    std::weak_ptr<Adapter> weak = shared_from_this();
    LaunchedProgram::Events events;
    events.output = [weak](std::string_view category, std::string text) {
      if (auto s = weak.lock()) s->output(category, std::move(text));
    };
    events.exited = [weak](int code) {
      if (auto s = weak.lock()) s->target_exited(code);
    };
    auto program = LaunchedProgram::start(strand_, reaper_, *spec, std::move(events));
    if (!program) return fail(request, program.error());
    program_ = std::move(*program);
    pid_ = program_->pid();
    launched_ = true;
    spdlog::info("profile-only session: launched {} as pid {}", spec->argv.back(), pid_);
    state_ = State::Running;
    respond(request);
    send_process_event("launch", spec->argv.size() > 1 ? spec->argv[1] : spec->argv[0]);
  }

  void attach(const Json& request) {
    if (!configuring(request)) return;
    auto pid = parse_attach(object_field(request, "arguments"));
    if (!pid) return fail(request, pid.error());
    pid_ = *pid;
    watch_ = ProcessWatch::start(strand_, pid_, [weak = weak_from_this()] {
      if (auto s = weak.lock()) s->target_exited(std::nullopt);
    });
    spdlog::info("profile-only session: attached to pid {}", pid_);
    state_ = State::Running;
    respond(request);
    send_process_event("attach", sampler::process::process_name(pid_));
  }

  void acknowledge(const Json& request) { respond(request); }

  // Breakpoints are kept by VS Code and sent to every adapter; here none can ever be hit.
  void set_breakpoints(const Json& request) {
    const Json& arguments = object_field(request, "arguments");
    Json list = Json::array();
    for (const char* key : {"breakpoints", "lines"}) {
      const auto it = arguments.find(key);
      if (it == arguments.end() || !it->is_array() || !list.empty()) continue;
      for (std::size_t i = 0; i < it->size(); ++i)
        list.push_back({{"verified", false},
                        {"message",
                         "A profile-only session has no debugger: breakpoints are "
                         "not hit. Debug with the \"dapprof\" type to use them."}});
    }
    respond(request, Json{{"breakpoints", list}});
  }

  void threads(const Json& request) {
    Json list = Json::array();
    if (pid_ > 0 && state_ == State::Running) {
      if (auto tids = sampler::process::list_threads(pid_)) {
        for (pid_t tid : *tids) {
          const auto name = sampler::process::process_name(tid);
          list.push_back({{"id", tid}, {"name", fmt::format("{} ({})", name, tid)}});
        }
      }
    }
    respond(request, Json{{"threads", list}});
  }

  void terminate(const Json& request) {
    respond(request);
    if (launched_ && program_ && program_->running()) {
      program_->terminate();  // its exit sends exited and terminated
    } else if (state_ != State::Exited) {
      // An attached process is not ours to stop: the session just ends.
      end_target();
      send_event("terminated", Json::object());
    }
  }

  void disconnect(const Json& request) {
    const Json& arguments = object_field(request, "arguments");
    const auto it = arguments.find("terminateDebuggee");
    const bool terminate = it != arguments.end() && it->is_boolean() ? it->get<bool>() : launched_;
    if (launched_ && program_ && program_->running()) {
      if (terminate)
        program_->terminate();
      else
        spdlog::warn("profile-only session: program {} is left running", pid_);
    }
    end_target();
    state_ = State::Closed;
    respond(request);
  }

  void unsupported(const Json& request) {
    fail(request, Error{fmt::format("\"{}\" is not available in a profile-only session, which "
                                    "has no debugger; debug with the \"dapprof\" type for it",
                                    string_field(request, "command")),
                        ErrorCode::InvalidArgument});
  }

  bool configuring(const Json& request) {
    if (state_ == State::Configuring) return true;
    fail(request, Error{"this session has already launched or attached to its program",
                        ErrorCode::InvalidArgument});
    return false;
  }

  void output(std::string_view category, std::string text) {
    send_event("output", Json{{"category", category}, {"output", std::move(text)}});
    if (channel_->queued_bytes() > kOutputHighWater && program_) program_->pause_output();
  }

  // The program ended: `exited` with its code when it is ours, then `terminated`. The sampler
  // sees the exit by itself and ends a run with profilingStopped.
  void target_exited(std::optional<int> exit_code) {
    if (state_ != State::Running) return;
    state_ = State::Exited;
    spdlog::info("profile-only session: process {} ended", pid_);
    if (exit_code) send_event("exited", Json{{"exitCode", *exit_code}});
    send_event("terminated", Json::object());
  }

  void end_target() {
    if (watch_) watch_->cancel();
    if (program_) program_->close();
    program_.reset();
    if (state_ == State::Running) state_ = State::Exited;
  }

  void on_closed(const std::string& error) {
    if (!error.empty()) spdlog::warn("profile-only session: {}", error);
    // The session's end without `disconnect` (its client went away): as `disconnect`'s default,
    // a launched program is terminated now and an attached one left running.
    if (launched_ && program_) program_->terminate();
    end_target();
    state_ = State::Closed;
    channel_->close();
  }

  void send_process_event(std::string_view method, const std::string& name) {
    send_event("process", Json{{"name", name},
                               {"systemProcessId", pid_},
                               {"isLocalProcess", true},
                               {"startMethod", method}});
  }

  void respond(const Json& request, Json body = Json::object()) {
    send(protocol::make_response(request, std::move(body)));
  }

  void fail(const Json& request, const Error& error) {
    spdlog::info("profile-only session: {} refused: {}", string_field(request, "command"),
                 error.message);
    send(protocol::make_error_response(request, protocol::from_error(error)));
  }

  void send_event(std::string_view event, Json body) {
    send(protocol::make_event(event, std::move(body)));
  }

  void send(Json message) {
    if (!channel_->is_open()) return;
    message["seq"] = ++seq_;
    channel_->send(message);
  }

  Channel::Executor strand_;
  Reaper& reaper_;
  std::string python_;
  std::shared_ptr<Channel> channel_;
  std::shared_ptr<LaunchedProgram> program_;
  std::shared_ptr<ProcessWatch> watch_;
  State state_ = State::Configuring;
  pid_t pid_ = 0;
  bool launched_ = false;
  std::int64_t seq_ = 0;
};

}  // namespace

UpstreamConnector make_connector(Reaper& reaper, std::size_t max_message_size, std::string python) {
  return [&reaper, max_message_size, python = std::move(python)](
             Channel::Executor strand, Reaper::OnExit, UpstreamReady ready) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      ready(Error{fmt::format("cannot create the profile-only adapter's socket pair: {}",
                              std::strerror(errno))});
      return;
    }
    auto adapter = std::make_shared<Adapter>(strand, reaper, python);
    adapter->start(
        Channel::create(strand, fds[1], fds[1], "profile-only adapter", max_message_size));
    Upstream upstream;
    upstream.description = "dapprof's profile-only adapter (no debugger)";
    upstream.peer.host_pids = true;
    upstream.channel = Channel::create(strand, fds[0], fds[0], "profile-only", max_message_size);
    ready(std::move(upstream));
  };
}

}  // namespace dapprof::adapter::profile_only
