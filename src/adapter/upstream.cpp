#include "adapter/upstream.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

namespace dapprof::adapter {
namespace {

using asio::ip::tcp;
constexpr auto kConnectTimeout = std::chrono::seconds(10);

void spawn_adapter(const UpstreamOptions& options, Reaper& reaper, std::size_t max_message_size,
                   Channel::Executor strand, Reaper::OnExit on_exit, const UpstreamReady& ready) {
  const auto argv = adapter_argv(options);
  ChildProcess::Pipes pipes;
  auto child = ChildProcess::spawn(reaper, argv, options.env, pipes, std::move(on_exit));
  if (!child) {
    ready(child.error());
    return;
  }
  Upstream upstream;
  upstream.description = fmt::format("debug adapter '{}' (pid {})", argv[0], (*child)->pid());
  upstream.channel =
      Channel::create(strand, pipes.from_child, pipes.to_child, "debug adapter", max_message_size);
  upstream.peer.child = (*child)->pid();
  upstream.child = std::move(*child);
  ready(std::move(upstream));
}

// Resolve + connect with a deadline; the state lives as long as the pending operations.
struct Connect : std::enable_shared_from_this<Connect> {
  Connect(Channel::Executor s, HostPort t, std::size_t max, std::string h, UpstreamReady r)
      : strand(s),
        resolver(s),
        socket(s),
        timer(s),
        target(std::move(t)),
        max_size(max),
        hint(std::move(h)),
        ready(std::move(r)) {}

  void run() {
    timer.expires_after(kConnectTimeout);
    timer.async_wait([self = shared_from_this()](const asio::error_code& ec) {
      if (ec || self->done) return;
      self->fail(fmt::format("no answer from debugpy at {}:{} within {} s", self->target.host,
                             self->target.port, kConnectTimeout.count()));
    });
    // A numeric address needs no resolver, and so no resolver thread, which asio would start
    // and keep for the rest of the daemon's life (debugpy's child ports are all 127.0.0.1).
    asio::error_code numeric;
    if (const auto address = asio::ip::make_address(target.host, numeric); !numeric) {
      socket.async_connect(
          tcp::endpoint(address, target.port),
          [self = shared_from_this()](const asio::error_code& e) { self->connected(e); });
      return;
    }
    resolver.async_resolve(
        target.host, std::to_string(target.port),
        [self = shared_from_this()](const asio::error_code& ec, tcp::resolver::results_type r) {
          if (self->done) return;
          if (ec)
            return self->fail(
                fmt::format("cannot resolve '{}': {}", self->target.host, ec.message()));
          asio::async_connect(
              self->socket, r,
              [self](const asio::error_code& e, const tcp::endpoint&) { self->connected(e); });
        });
  }

  void connected(const asio::error_code& ec) {
    if (done) return;
    if (ec)
      return fail(fmt::format("cannot connect to debugpy at {}:{}: {} {}", target.host, target.port,
                              ec.message(), hint));
    done = true;
    timer.cancel();
    // Both ends, to find the process that listens (and so the debuggee's PID namespace) only
    // if profiling asks.
    sockaddr_storage local{}, remote{};
    socklen_t local_size = sizeof local, remote_size = sizeof remote;
    const int raw = socket.native_handle();
    const bool ends = ::getsockname(raw, reinterpret_cast<sockaddr*>(&local), &local_size) == 0 &&
                      ::getpeername(raw, reinterpret_cast<sockaddr*>(&remote), &remote_size) == 0;
    // The channel owns plain fds; hand over a duplicate and let the socket object go. Close on
    // exec: an adapter spawned later must not keep this connection open.
    const int fd = ::fcntl(socket.native_handle(), F_DUPFD_CLOEXEC, 3);
    asio::error_code ignored;
    socket.close(ignored);
    if (fd < 0) {
      ready(Error{"cannot duplicate the upstream socket"});
      return;
    }
    Upstream upstream;
    upstream.description = fmt::format("debugpy at {}:{}", target.host, target.port);
    if (ends) {
      upstream.peer.local = local;
      upstream.peer.remote = remote;
    }
    upstream.channel = Channel::create(strand, fd, fd, "debugpy", max_size);
    ready(std::move(upstream));
  }

  void fail(std::string message) {
    if (done) return;
    done = true;
    asio::error_code ignored;
    resolver.cancel();
    socket.close(ignored);
    timer.cancel();
    ready(Error{std::move(message)});
  }

  Channel::Executor strand;
  tcp::resolver resolver;
  tcp::socket socket;
  asio::steady_timer timer;
  HostPort target;
  std::size_t max_size;
  std::string hint;
  UpstreamReady ready;
  bool done = false;
};

}  // namespace

std::vector<std::string> adapter_argv(const UpstreamOptions& options) {
  if (!options.adapter_command.empty()) return options.adapter_command;
  return {options.python, "-m", "debugpy.adapter"};
}

UpstreamConnector make_upstream_connector(const UpstreamOptions& options, Reaper& reaper,
                                          std::size_t max_message_size) {
  return [options, &reaper, max_message_size](Channel::Executor strand, Reaper::OnExit on_exit,
                                              UpstreamReady ready) {
    if (options.connect) {
      std::make_shared<Connect>(strand, *options.connect, max_message_size,
                                "(is the program running with debugpy.listen on that address?)",
                                std::move(ready))
          ->run();
    } else {
      spawn_adapter(options, reaper, max_message_size, strand, std::move(on_exit), ready);
    }
  };
}

UpstreamConnector make_tcp_connector(HostPort target, std::size_t max_message_size,
                                     std::string unreachable_hint) {
  return [target = std::move(target), max_message_size, hint = std::move(unreachable_hint)](
             Channel::Executor strand, Reaper::OnExit, UpstreamReady ready) {
    std::make_shared<Connect>(strand, target, max_message_size, hint, std::move(ready))->run();
  };
}

}  // namespace dapprof::adapter
