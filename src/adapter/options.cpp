#include "adapter/options.hpp"

#include <fmt/format.h>

#include <charconv>

namespace dapprof::adapter {

Result<HostPort> parse_host_port(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos)
    return Error{fmt::format("'{}' is not HOST:PORT (e.g. 127.0.0.1:4711)", text),
                 ErrorCode::InvalidArgument};
  HostPort out;
  out.host = text.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']')
    out.host = out.host.substr(1, out.host.size() - 2);
  if (out.host.empty()) out.host = "127.0.0.1";
  const std::string port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc{} || ptr != port.data() + port.size() || value > 65535)
    return Error{fmt::format("'{}' in '{}' is not a TCP port (0-65535)", port, text),
                 ErrorCode::InvalidArgument};
  out.port = static_cast<std::uint16_t>(value);
  return out;
}

}  // namespace dapprof::adapter
