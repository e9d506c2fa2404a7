#include "protocol/framing.hpp"

#include <fmt/format.h>

#include <charconv>
#include <optional>

namespace dapprof::protocol {
namespace {

constexpr std::string_view kHeaderEnd = "\r\n\r\n";
// A header block larger than this is not DAP; refuse it rather than buffering forever.
constexpr std::size_t kMaxHeaderBytes = 8 * 1024;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

DecodeStep FrameDecoder::next() {
  if (failed_) return FramingError{failure_};
  auto fail = [this](std::string message) -> DecodeStep {
    failed_ = true;
    failure_ = std::move(message);
    return FramingError{failure_};
  };

  std::string_view pending(buffer_.data() + pos_, buffer_.size() - pos_);
  const auto header_end = pending.find(kHeaderEnd);
  if (header_end == std::string_view::npos) {
    if (pending.size() > kMaxHeaderBytes)
      return fail(fmt::format("DAP header exceeds {} bytes without a blank line", kMaxHeaderBytes));
    return NeedMore{};
  }

  std::optional<std::size_t> length;
  std::string_view headers = pending.substr(0, header_end);
  while (!headers.empty()) {
    const auto eol = headers.find("\r\n");
    std::string_view line = headers.substr(0, eol);
    headers = eol == std::string_view::npos ? std::string_view{} : headers.substr(eol + 2);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos)
      return fail(fmt::format("malformed DAP header line '{}'", line));
    if (!iequals(trim(line.substr(0, colon)), "Content-Length")) continue;  // other headers ignored
    const auto value = trim(line.substr(colon + 1));
    std::size_t n = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (value.empty() || ec != std::errc{} || ptr != value.data() + value.size())
      return fail(fmt::format("Content-Length '{}' is not a non-negative integer", value));
    // Two different lengths leave the message boundary ambiguous: refuse rather than guess.
    if (length && *length != n) return fail("DAP header has conflicting Content-Length values");
    length = n;
  }
  if (!length) return fail("DAP header has no Content-Length");
  if (*length > max_body_)
    return fail(fmt::format("DAP message body of {} bytes exceeds the limit of {} bytes", *length,
                            max_body_));

  const std::size_t body_start = header_end + kHeaderEnd.size();
  if (pending.size() - body_start < *length) return NeedMore{};
  const std::string_view body = pending.substr(body_start, *length);
  // Parse before compacting: body points into buffer_.
  Json message = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  pos_ += body_start + *length;
  // Compact once the consumed prefix dominates, keeping appends amortised O(1).
  if (pos_ > 4096 && pos_ * 2 > buffer_.size()) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }

  if (message.is_discarded()) return fail("DAP message body is not valid JSON");
  if (!message.is_object()) return fail("DAP message body is not a JSON object");
  return message;
}

std::string dump_json(const Json& message) {
  return message.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string encode_frame(const Json& message) {
  const std::string body = dump_json(message);
  std::string frame = fmt::format("Content-Length: {}\r\n\r\n", body.size());
  frame += body;
  return frame;
}

}  // namespace dapprof::protocol
