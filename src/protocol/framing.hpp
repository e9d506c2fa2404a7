#pragma once
// DAP wire format: "Content-Length: N\r\n\r\n" followed by N bytes of UTF-8 JSON.
// Separate from transport and session: bytes in, messages out.
#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

#include "protocol/json.hpp"

namespace dapprof::protocol {

inline constexpr std::size_t kDefaultMaxBodyBytes = 64u * 1024u * 1024u;

struct NeedMore {};
struct FramingError {
  std::string message;
};
// One step of decoding: a complete message, a request for more bytes, or a fatal error
// (after which the stream is unusable and the session should be closed).
using DecodeStep = std::variant<NeedMore, Json, FramingError>;

class FrameDecoder {
 public:
  explicit FrameDecoder(std::size_t max_body_bytes = kDefaultMaxBodyBytes)
      : max_body_(max_body_bytes) {}

  // Appends raw bytes as they arrive (fragments or several frames at once).
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // Extracts the next message. Call repeatedly until NeedMore.
  DecodeStep next();
  // Bytes received but not yet consumed (a partial frame).
  std::size_t buffered() const { return buffer_.size() - pos_; }

 private:
  std::string buffer_;
  std::size_t pos_ = 0;
  std::size_t max_body_;
  bool failed_ = false;
  std::string failure_;
};

// Serializes a message with its header into one contiguous buffer, so that the transport can
// write header and body in a single write (no delayed-ACK stall between the two).
// Invalid UTF-8 in strings is replaced rather than throwing.
std::string encode_frame(const Json& message);
std::string dump_json(const Json& message);

}  // namespace dapprof::protocol
