// dap_responder: the fastest possible DAP peer, for measuring what dapprof adds. Answers every
// request at once with an empty success response; `flood` {count, size} first emits `count`
// output events of `size` characters. Serves stdin/stdout (default) or one TCP connection
// (--listen PORT, 0 for any; the port is printed as "PORT n" on stdout).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "protocol/framing.hpp"

using dapprof::protocol::encode_frame;
using dapprof::protocol::FrameDecoder;
using dapprof::protocol::Json;

namespace {

bool write_all(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

int serve(int in, int out) {
  FrameDecoder decoder;
  char buffer[65536];
  std::int64_t seq = 0;
  for (;;) {
    const ssize_t n = ::read(in, buffer, sizeof buffer);
    if (n <= 0) return 0;
    decoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    for (;;) {
      auto step = decoder.next();
      if (std::holds_alternative<dapprof::protocol::NeedMore>(step)) break;
      if (std::holds_alternative<dapprof::protocol::FramingError>(step)) return 1;
      const Json& request = std::get<Json>(step);
      if (request.value("type", "") != "request") continue;
      const std::string command = request.value("command", "");
      if (command == "flood") {
        const auto& args = request["arguments"];
        const int count = args.value("count", 0);
        const std::string text(args.value("size", 80), 'x');
        std::string batch;
        for (int i = 0; i < count; ++i) {
          batch += encode_frame({{"seq", ++seq},
                                 {"type", "event"},
                                 {"event", "output"},
                                 {"body", {{"category", "stdout"}, {"output", text}}}});
          if (batch.size() > 256 * 1024) {
            if (!write_all(out, batch)) return 1;
            batch.clear();
          }
        }
        if (!write_all(out, batch)) return 1;
      }
      if (command == "disconnect") {
        write_all(out, encode_frame({{"seq", ++seq},
                                     {"type", "response"},
                                     {"request_seq", request.value("seq", 0)},
                                     {"success", true},
                                     {"command", command}}));
        continue;
      }
      if (!write_all(out, encode_frame({{"seq", ++seq},
                                        {"type", "response"},
                                        {"request_seq", request.value("seq", 0)},
                                        {"success", true},
                                        {"command", command},
                                        {"body", Json::object()}})))
        return 1;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--listen") == 0) {
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(std::atoi(argv[2])));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listener, 1) != 0 ||
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::perror("dap_responder: listen");
      return 1;
    }
    std::printf("PORT %d\n", ntohs(addr.sin_port));
    std::fflush(stdout);
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return serve(fd, fd);
  }
  return serve(STDIN_FILENO, STDOUT_FILENO);
}
