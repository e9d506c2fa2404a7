#pragma once
// A framed DAP message channel over file descriptors: a TCP or Unix socket (one fd both ways) or
// a pair of pipes (the spawned adapter's stdin/stdout, or our own stdio). Wire format lives in
// protocol/framing; session logic lives in Session. All callbacks run on the given executor
// (the session's strand).
#include <asio.hpp>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/framing.hpp"

namespace dapprof::adapter {

using protocol::Json;

class Channel : public std::enable_shared_from_this<Channel> {
 public:
  using Executor = asio::strand<asio::io_context::executor_type>;
  using OnMessage = std::function<void(Json&&)>;
  // Called once when reading ends: error empty for an orderly end of stream, else what went
  // wrong (I/O error, malformed frame, oversize body).
  using OnClosed = std::function<void(const std::string& error)>;

  // Takes ownership of the fds. read_fd == write_fd for sockets.
  static std::shared_ptr<Channel> create(Executor executor, int read_fd, int write_fd,
                                         std::string name, std::size_t max_message_size);

  Channel(Executor executor, int read_fd, int write_fd, std::string name,
          std::size_t max_message_size);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  void start(OnMessage on_message, OnClosed on_closed);
  // Queues one frame; frames are written whole and in order, one write outstanding at a time.
  void send(const Json& message);
  void send_frame(std::string frame);
  // Half-close once everything queued is written: EOF for the peer (stdin of a child). `then`
  // runs (on the executor) once that has happened.
  void close_write_when_flushed(std::function<void()> then = {});
  // Closes both directions now; pending writes are dropped. Idempotent.
  void close();
  // Flow control: stop issuing reads while the other side's write queue is too long.
  void pause_reading();
  void resume_reading();
  std::size_t queued_bytes() const { return queued_bytes_; }
  // Bytes written but not yet taken by the peer: still in the kernel's socket send queue or in
  // the pipe. Lets low-priority traffic wait while a slow peer has a backlog we cannot see.
  std::size_t unsent_in_kernel();
  // Called each time the write queue drains completely.
  void on_drained(std::function<void()> callback) { on_drained_ = std::move(callback); }
  // Called once if a write fails (the peer is gone: EPIPE, a reset). Without it, a failed write
  // only stops further writes and the channel ends when its reading does.
  void on_write_failed(OnClosed callback) { on_write_failed_ = std::move(callback); }
  bool is_open() const { return !closed_; }
  const std::string& name() const { return name_; }

 private:
  void do_read();
  void on_read(const asio::error_code& ec, std::size_t n);
  void do_write();
  void finish(const std::string& error);
  void shutdown_write();

  Executor executor_;
  asio::posix::stream_descriptor in_;
  std::optional<asio::posix::stream_descriptor> out_;  // empty when in_ is a socket
  bool is_socket_ = false;
  std::string name_;
  protocol::FrameDecoder decoder_;
  std::vector<char> read_buffer_;
  OnMessage on_message_;
  OnClosed on_closed_;
  std::function<void()> on_drained_;
  std::function<void()> on_write_closed_;
  OnClosed on_write_failed_;
  std::deque<std::string> queue_;
  std::vector<std::string> writing_;
  std::size_t queued_bytes_ = 0;
  bool write_in_flight_ = false;
  bool read_in_flight_ = false;
  bool paused_ = false;
  bool close_write_pending_ = false;
  bool write_closed_ = false;
  bool closed_ = false;
  bool finished_ = false;
};

// Sets TCP_NODELAY (no delayed-ACK stall on small frames); ignores non-TCP sockets.
void set_no_delay(int fd);

}  // namespace dapprof::adapter
