#pragma once
// The far end of a real socket, driven synchronously by a test: it writes raw bytes or frames
// and reads frames with a timeout (so a broken daemon fails the test instead of hanging it).
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>

#include "protocol/framing.hpp"

namespace dapprof::adapter::test {

using protocol::Json;

class FakePeer {
 public:
  explicit FakePeer(int fd) : fd_(fd) {}
  ~FakePeer() { close(); }
  FakePeer(const FakePeer&) = delete;
  FakePeer& operator=(const FakePeer&) = delete;

  void send_raw(const std::string& bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + off, bytes.size() - off);
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }
  void send(const Json& message) { send_raw(protocol::encode_frame(message)); }

  // The next message, or nullopt on EOF / timeout (eof() tells which).
  std::optional<Json> recv(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto step = decoder_.next();
      if (auto* message = std::get_if<Json>(&step)) return std::move(*message);
      if (std::holds_alternative<protocol::FramingError>(step)) return std::nullopt;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[65536];
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n <= 0) {
        eof_ = true;
        return std::nullopt;
      }
      decoder_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    }
  }
  // Skips messages until EOF; true if EOF came within the timeout.
  bool wait_eof(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!eof_ && std::chrono::steady_clock::now() < deadline)
      (void)recv(std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now()));
    return eof_;
  }
  bool eof() const { return eof_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }

 private:
  int fd_;
  protocol::FrameDecoder decoder_;
  bool eof_ = false;
};

}  // namespace dapprof::adapter::test
