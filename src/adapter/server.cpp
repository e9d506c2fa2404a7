#include "adapter/server.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "adapter/runtime.hpp"

namespace dapprof::adapter {
namespace {

using asio::ip::tcp;

Result<asio::ip::address> listen_address(const std::string& host) {
  if (host == "localhost") return asio::ip::address(asio::ip::address_v4::loopback());
  asio::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec)
    return Error{fmt::format("'{}' is not an IP address; --listen takes e.g. 127.0.0.1:4711", host),
                 ErrorCode::InvalidArgument};
  return address;
}

class Server {
 public:
  Server(Runtime& runtime, tcp::endpoint endpoint)
      : runtime_(runtime), acceptor_(runtime.io()), endpoint_(endpoint), retry_(runtime.io()) {}

  Status listen() {
    asio::error_code ec;
    acceptor_.open(endpoint_.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint_, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      return Error{fmt::format("cannot listen on {}:{}: {}", endpoint_.address().to_string(),
                               endpoint_.port(), ec.message())};
    endpoint_ = acceptor_.local_endpoint();
    runtime_.on_stopping([this] {
      asio::error_code ignored;
      acceptor_.close(ignored);
      retry_.cancel();
    });
    return Ok{};
  }

  const tcp::endpoint& endpoint() const { return endpoint_; }

  void accept() {
    acceptor_.async_accept(asio::make_strand(runtime_.io()),
                           [this](const asio::error_code& ec, tcp::socket socket) {
                             if (ec == asio::error::operation_aborted || !acceptor_.is_open())
                               return;
                             if (ec) {
                               // Out of fds, typically: wait a little instead of spinning.
                               spdlog::error("accept failed: {}", ec.message());
                               retry_.expires_after(std::chrono::milliseconds(100));
                               retry_.async_wait([this](const asio::error_code& e) {
                                 if (!e) accept();
                               });
                               return;
                             }
                             asio::error_code ignored;
                             const auto peer = socket.remote_endpoint(ignored);
                             // Close-on-exec: adapters spawned later must not inherit it.
                             const int fd = ::fcntl(socket.native_handle(), F_DUPFD_CLOEXEC, 3);
                             socket.close(ignored);
                             if (fd >= 0) {
                               auto session = runtime_.start_session(fd, fd);
                               spdlog::info("session {}: client {}:{} connected", session->id(),
                                            peer.address().to_string(), peer.port());
                             }
                             accept();
                           });
  }

 private:
  Runtime& runtime_;
  tcp::acceptor acceptor_;
  tcp::endpoint endpoint_;
  asio::steady_timer retry_;
};

Status write_port_file(const std::string& path, unsigned short port) {
  // Written whole then renamed, so that a reader never sees a partial number.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << "\n";
    if (!out) return Error{fmt::format("cannot write the port file '{}'", tmp)};
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return Error{fmt::format("cannot write the port file '{}'", path)};
  return Ok{};
}

}  // namespace

Status check_listen_address(const std::string& host, bool allow_remote) {
  auto address = listen_address(host);
  if (!address) return address.error();
  if (address->is_loopback()) return Ok{};
  if (!allow_remote)
    return Error{
        fmt::format("refusing to listen on non-loopback address {}: a DAP client can make the "
                    "debugger run arbitrary code. Use 127.0.0.1 (and an SSH tunnel for remote "
                    "access), or pass --allow-remote if this network is trusted",
                    host),
        ErrorCode::PermissionDenied};
  spdlog::warn(
      "listening on non-loopback address {} (--allow-remote): anyone who can connect "
      "can run code through the debugger",
      host);
  return Ok{};
}

int run_serve(const Options& options) {
  auto where = parse_host_port(options.listen);
  if (!where) {
    spdlog::error("{}", where.message());
    return 2;
  }
  if (auto allowed = check_listen_address(where->host, options.allow_remote); !allowed) {
    spdlog::error("{}", allowed.message());
    return 2;
  }
  Runtime runtime(options);
  if (auto ok = runtime.init(); !ok) {
    spdlog::error("{}", ok.message());
    return 2;
  }
  Server server(runtime, tcp::endpoint(*listen_address(where->host), where->port));
  if (auto ok = server.listen(); !ok) {
    spdlog::error("{}", ok.message());
    return 1;
  }
  const auto& ep = server.endpoint();
  const std::string address = ep.address().is_v6()
                                  ? fmt::format("[{}]:{}", ep.address().to_string(), ep.port())
                                  : fmt::format("{}:{}", ep.address().to_string(), ep.port());
  // Always on stderr, whatever the log settings: scripts and tests read the port from here.
  std::fprintf(stderr, "dapprof: listening on %s\n", address.c_str());
  std::fflush(stderr);
  spdlog::info("listening on {}", address);
  if (!options.port_file.empty()) {
    if (auto ok = write_port_file(options.port_file, ep.port()); !ok) {
      spdlog::error("{}", ok.message());
      return 1;
    }
  }
  server.accept();
  const int code = runtime.run();
  spdlog::info("stopped");
  return code;
}

}  // namespace dapprof::adapter
