#include "adapter/transport.hpp"

#include <fmt/format.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dapprof::adapter {
namespace {
constexpr std::size_t kReadChunk = 64 * 1024;

bool fd_is_socket(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}
}  // namespace

void set_no_delay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // fails harmlessly if not TCP
}

std::shared_ptr<Channel> Channel::create(Executor executor, int read_fd, int write_fd,
                                         std::string name, std::size_t max_message_size) {
  return std::make_shared<Channel>(std::move(executor), read_fd, write_fd, std::move(name),
                                   max_message_size);
}

Channel::Channel(Executor executor, int read_fd, int write_fd, std::string name,
                 std::size_t max_message_size)
    : executor_(executor),
      in_(executor, read_fd),
      name_(std::move(name)),
      decoder_(max_message_size),
      read_buffer_(kReadChunk) {
  if (write_fd != read_fd) out_.emplace(executor, write_fd);
  is_socket_ = !out_ && fd_is_socket(read_fd);
  if (is_socket_) set_no_delay(read_fd);
}

Channel::~Channel() = default;

void Channel::start(OnMessage on_message, OnClosed on_closed) {
  on_message_ = std::move(on_message);
  on_closed_ = std::move(on_closed);
  do_read();
}

void Channel::do_read() {
  if (closed_ || paused_ || read_in_flight_ || finished_) return;
  read_in_flight_ = true;
  in_.async_read_some(asio::buffer(read_buffer_),
                      asio::bind_executor(executor_, [self = shared_from_this()](
                                                         const asio::error_code& ec,
                                                         std::size_t n) { self->on_read(ec, n); }));
}

void Channel::on_read(const asio::error_code& ec, std::size_t n) {
  read_in_flight_ = false;
  if (closed_ || finished_) return;
  if (ec) {
    finish(ec == asio::error::eof ? std::string{} : ec.message());
    return;
  }
  decoder_.feed(std::string_view(read_buffer_.data(), n));
  for (;;) {
    auto step = decoder_.next();
    if (std::holds_alternative<protocol::NeedMore>(step)) break;
    if (auto* error = std::get_if<protocol::FramingError>(&step)) {
      finish(error->message);
      return;
    }
    on_message_(std::move(std::get<Json>(step)));
    if (closed_ || finished_) return;  // the handler may have ended the session
  }
  do_read();
}

void Channel::finish(const std::string& error) {
  if (finished_) return;
  finished_ = true;
  // Moved out first: the callback may drop the last reference to whoever owns this channel.
  auto callback = std::move(on_closed_);
  on_message_ = nullptr;
  if (callback) callback(error);
}

void Channel::send(const Json& message) { send_frame(protocol::encode_frame(message)); }

void Channel::send_frame(std::string frame) {
  if (closed_ || write_closed_ || close_write_pending_) return;
  queued_bytes_ += frame.size();
  queue_.push_back(std::move(frame));
  do_write();
}

void Channel::do_write() {
  if (write_in_flight_ || closed_ || write_closed_) return;
  if (queue_.empty()) {
    if (close_write_pending_) shutdown_write();
    if (on_drained_) on_drained_();
    return;
  }
  // Everything queued goes out in one gathered write: each frame stays whole and in order, and
  // a burst of events costs one syscall instead of one per frame.
  writing_.clear();
  std::vector<asio::const_buffer> buffers;
  while (!queue_.empty() && buffers.size() < 64) {
    writing_.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  buffers.reserve(writing_.size());
  for (const auto& frame : writing_) buffers.emplace_back(asio::buffer(frame));
  write_in_flight_ = true;
  auto handler = asio::bind_executor(
      executor_, [self = shared_from_this()](const asio::error_code& ec, std::size_t n) {
        self->write_in_flight_ = false;
        self->queued_bytes_ -= std::min(self->queued_bytes_, n);
        self->writing_.clear();
        if (ec) {
          if (!self->closed_) spdlog::debug("{}: write failed: {}", self->name_, ec.message());
          self->write_closed_ = true;
          self->queue_.clear();
          self->queued_bytes_ = 0;
          if (auto then = std::move(self->on_write_closed_))
            asio::post(self->executor_, std::move(then));
          if (auto failed = std::move(self->on_write_failed_); failed && !self->closed_)
            asio::post(self->executor_, [failed = std::move(failed), why = ec.message()] {
              failed(fmt::format("cannot write to it: {}", why));
            });
          return;
        }
        self->do_write();
      });
  if (out_)
    asio::async_write(*out_, buffers, std::move(handler));
  else
    asio::async_write(in_, buffers, std::move(handler));
}

void Channel::close_write_when_flushed(std::function<void()> then) {
  if (closed_ || write_closed_) {
    if (then) asio::post(executor_, std::move(then));
    return;
  }
  on_write_closed_ = std::move(then);
  close_write_pending_ = true;
  if (!write_in_flight_ && queue_.empty()) shutdown_write();
}

void Channel::shutdown_write() {
  if (write_closed_) return;
  write_closed_ = true;
  asio::error_code ignored;
  if (out_)
    out_->close(ignored);
  else if (is_socket_)
    ::shutdown(in_.native_handle(), SHUT_WR);
  if (auto then = std::move(on_write_closed_)) asio::post(executor_, std::move(then));
}

void Channel::close() {
  if (closed_) return;
  closed_ = true;
  asio::error_code ignored;
  in_.close(ignored);
  if (out_) out_->close(ignored);
  queue_.clear();
  queued_bytes_ = 0;
  on_message_ = nullptr;
  on_closed_ = nullptr;
  on_drained_ = nullptr;
  on_write_closed_ = nullptr;
  on_write_failed_ = nullptr;
}

void Channel::pause_reading() { paused_ = true; }

void Channel::resume_reading() {
  if (!paused_) return;
  paused_ = false;
  do_read();
}

std::size_t Channel::unsent_in_kernel() {
  if (closed_) return 0;
  const int fd = out_ ? out_->native_handle() : in_.native_handle();
  int bytes = 0;
  // SIOCOUTQ: unsent (and unacknowledged) bytes of a socket; FIONREAD: unread bytes of a pipe.
  if (::ioctl(fd, is_socket_ ? SIOCOUTQ : FIONREAD, &bytes) != 0 || bytes < 0) return 0;
  return static_cast<std::size_t>(bytes);
}

}  // namespace dapprof::adapter
