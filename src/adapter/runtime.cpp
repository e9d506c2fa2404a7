#include "adapter/runtime.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

#include "adapter/profile_only/adapter.hpp"

namespace dapprof::adapter {
namespace {
constexpr auto kShutdownPoll = std::chrono::milliseconds(20);
// Sessions close the adapters' stdin first (a stdio debugpy adapter then ends its debuggee);
// only adapters still running after this get SIGTERM, and SIGKILL one grace period later.
constexpr auto kOrderlyExitWait = std::chrono::milliseconds(2000);
constexpr auto kKillGrace = std::chrono::milliseconds(1000);
constexpr auto kShutdownDeadline = std::chrono::milliseconds(4000);
}  // namespace

Runtime::Runtime(const Options& options)
    : options_(options), reaper_(io_), stop_signals_(io_, SIGINT, SIGTERM), shutdown_timer_(io_) {
  // A peer that goes away mid-write must be an error code, not a dead daemon.
  ::signal(SIGPIPE, SIG_IGN);
  connector_ = options_.upstream.profile_only
                   ? profile_only::make_connector(reaper_, options_.max_message_size,
                                                  options_.upstream.python)
                   : make_upstream_connector(options_.upstream, reaper_, options_.max_message_size);
  stop_signals_.async_wait([this](const asio::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("received signal {}, shutting down", signal);
    shutdown();
  });
}

Runtime::~Runtime() { reaper_.kill_and_reap_all(); }

Status Runtime::init() {
  if (!options_.trace_dap.empty()) {
    auto trace = TraceWriter::open(options_.trace_dap);
    if (!trace) return trace.error();
    trace_ = std::move(*trace);
  }
  return Ok{};
}

std::shared_ptr<Session> Runtime::start_session(int client_read_fd, int client_write_fd,
                                                std::function<void()> on_end) {
  Session::Config config;
  config.max_message_size = options_.max_message_size;
  config.profiling.max_pending_samples = options_.max_pending_samples;
  config.connector = connector_;
  config.trace = trace_;
  config.start_child = [this](std::shared_ptr<Session> child) { adopt_session(std::move(child)); };
  auto session =
      Session::create(asio::make_strand(io_), client_read_fd, client_write_fd, std::move(config));
  adopt_session(session, std::move(on_end));
  return session;
}

void Runtime::adopt_session(std::shared_ptr<Session> session, std::function<void()> on_end) {
  const auto id = session->id();
  // Set after creation: the callback needs the id, and must not own the session.
  session->set_on_end([this, id, on_end = std::move(on_end)] {
    {
      std::lock_guard lock(mutex_);
      sessions_.erase(id);
    }
    if (on_end) on_end();
  });
  {
    std::lock_guard lock(mutex_);
    sessions_[id] = session;
  }
  if (stopping_)
    session->shutdown();
  else
    session->start();
}

std::size_t Runtime::sessions() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

void Runtime::shutdown() {
  asio::post(io_, [this] {
    if (stopping_) return;
    stopping_ = true;
    shutdown_started_ = std::chrono::steady_clock::now();
    asio::error_code ignored;
    stop_signals_.cancel(ignored);
    if (on_stopping_) on_stopping_();
    std::vector<std::shared_ptr<Session>> live;
    {
      std::lock_guard lock(mutex_);
      for (auto& [id, session] : sessions_) live.push_back(session);
    }
    for (auto& session : live) session->shutdown();
    poll_shutdown();
  });
}

void Runtime::poll_shutdown() {
  const auto elapsed = std::chrono::steady_clock::now() - shutdown_started_;
  if ((sessions() == 0 && reaper_.live() == 0) || elapsed > kShutdownDeadline) {
    if (reaper_.live() > 0) spdlog::warn("killing {} remaining child process(es)", reaper_.live());
    io_.stop();
    return;
  }
  if (!terminated_children_ && elapsed > kOrderlyExitWait) {
    terminated_children_ = true;
    reaper_.terminate_all(kKillGrace);
  }
  shutdown_timer_.expires_after(kShutdownPoll);
  shutdown_timer_.async_wait([this](const asio::error_code& ec) {
    if (!ec) poll_shutdown();
  });
}

int Runtime::run() {
  io_.run();
  // Whatever is still open is closed now and its aborted handlers drained, so that no session
  // outlives the loop (their adapters are then killed and reaped below, not left behind).
  std::vector<std::shared_ptr<Session>> live;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, session] : sessions_) live.push_back(session);
  }
  for (auto& session : live) session->abort();
  live.clear();
  asio::error_code ignored;
  stop_signals_.cancel(ignored);
  shutdown_timer_.cancel();
  reaper_.kill_and_reap_all();
  io_.restart();
  io_.poll();
  {
    std::lock_guard lock(mutex_);
    sessions_.clear();
  }
  return 0;
}

}  // namespace dapprof::adapter
