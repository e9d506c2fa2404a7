#include "adapter/child_sessions.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "adapter/fields.hpp"
#include "adapter/upstream.hpp"

namespace dapprof::adapter {
namespace {

using asio::ip::tcp;

bool same_address(const HostPort& a, const HostPort& b) {
  return a.port == b.port && a.host == b.host;
}

// The spawned debug adapters must not inherit a listener: a copy held by another process would
// keep the port accepting after this session has closed it.
void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC); }

Result<HostPort> announced_address(const Json& body) {
  const Json& connect = object_field(body, "connect");
  const std::string_view host = string_field(connect, "host");
  const auto port = integer_field(connect, "port");
  if (host.empty() || !port || *port <= 0 || *port > 65535)
    return Error{"the debugpyAttach event has no usable 'connect' address",
                 ErrorCode::InvalidArgument};
  return HostPort{std::string(host), static_cast<std::uint16_t>(*port)};
}

}  // namespace

struct ChildSessions::Listener {
  Listener(Channel::Executor strand, HostPort original_address)
      : original(std::move(original_address)), acceptor(strand), retry(strand) {}
  HostPort original;  // debugpy's adapter
  HostPort ours;      // what the client is given
  tcp::acceptor acceptor;
  asio::steady_timer retry;
};

ChildSessions::ChildSessions(Channel::Executor strand, std::uint64_t session_id,
                             Session::Config config)
    : strand_(strand), session_id_(session_id), config_(std::move(config)) {
  config_.on_end = {};  // the owner's; each child gets its own from whoever starts it
}

ChildSessions::~ChildSessions() { close(); }

void ChildSessions::add_alias(HostPort ours, HostPort original) {
  aliases_.emplace_back(std::move(ours), std::move(original));
}

HostPort ChildSessions::resolve_alias(const HostPort& announced) const {
  for (const auto& [ours, original] : aliases_)
    if (same_address(ours, announced)) return original;
  return announced;
}

Status ChildSessions::redirect(Json& body) {
  auto announced = announced_address(body);
  if (!announced) return announced.error();
  if (closed_) return Error{"the debug session has ended"};
  const HostPort original = resolve_alias(*announced);
  std::shared_ptr<Listener> listener;
  for (const auto& l : listeners_)
    if (same_address(l->original, original)) listener = l;
  if (!listener) {
    auto opened = listen(original);
    if (!opened) return opened.error();
    listener = std::move(*opened);
  }
  body["connect"] = Json{{"host", listener->ours.host}, {"port", listener->ours.port}};
  spdlog::info("session {}: child process {} announced; its client attaches through {}:{}",
               session_id_, integer_field(body, "subProcessId").value_or(0), listener->ours.host,
               listener->ours.port);
  return Ok{};
}

Result<std::shared_ptr<ChildSessions::Listener>> ChildSessions::listen(const HostPort& original) {
  auto listener = std::make_shared<Listener>(strand_, original);
  // Loopback only, whatever the daemon listens on: debugpy's adapter port is loopback too, and
  // whoever connects can make the debugger run code.
  const tcp::endpoint endpoint(asio::ip::address_v4::loopback(), 0);
  asio::error_code ec;
  listener->acceptor.open(endpoint.protocol(), ec);
  if (!ec) set_cloexec(listener->acceptor.native_handle());
  if (!ec) listener->acceptor.bind(endpoint, ec);
  if (!ec) listener->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return Error{
        fmt::format("cannot listen on a loopback port for child processes: {}", ec.message())};
  listener->ours = {"127.0.0.1", listener->acceptor.local_endpoint().port()};
  spdlog::info("session {}: listening on {}:{} for child sessions of debugpy at {}:{}", session_id_,
               listener->ours.host, listener->ours.port, original.host, original.port);
  listeners_.push_back(listener);
  accept(listener);
  return listener;
}

void ChildSessions::accept(const std::shared_ptr<Listener>& listener) {
  listener->acceptor.async_accept(
      [self = shared_from_this(), listener](const asio::error_code& ec, tcp::socket socket) {
        if (self->closed_ || ec == asio::error::operation_aborted) return;
        if (ec) {
          // Out of fds, typically: wait a little instead of spinning.
          spdlog::error("session {}: accepting a child session failed: {}", self->session_id_,
                        ec.message());
          listener->retry.expires_after(std::chrono::milliseconds(100));
          listener->retry.async_wait([self, listener](const asio::error_code& e) {
            if (!e && !self->closed_) self->accept(listener);
          });
          return;
        }
        const int fd = ::fcntl(socket.native_handle(), F_DUPFD_CLOEXEC, 3);
        asio::error_code ignored;
        socket.close(ignored);
        if (fd >= 0) self->start_child(*listener, fd);
        self->accept(listener);
      });
}

void ChildSessions::start_child(const Listener& listener, int client_fd) {
  Session::Config config = config_;
  config.connector = make_tcp_connector(
      listener.original, config.max_message_size,
      "(the debug adapter that announced this child process has probably exited)");
  auto child = Session::create(asio::make_strand(strand_.get_inner_executor()), client_fd,
                               client_fd, std::move(config));
  spdlog::info("session {}: child session of session {}, upstream debugpy at {}:{}", child->id(),
               session_id_, listener.original.host, listener.original.port);
  child->child_sessions().add_alias(listener.ours, listener.original);
  if (config_.start_child)
    config_.start_child(std::move(child));
  else
    child->start();
}

void ChildSessions::close() {
  if (closed_) return;
  closed_ = true;
  for (const auto& listener : listeners_) {
    asio::error_code ignored;
    listener->acceptor.close(ignored);
    listener->retry.cancel();
  }
  if (!listeners_.empty())
    spdlog::info("session {}: no longer accepting child sessions", session_id_);
}

}  // namespace dapprof::adapter
