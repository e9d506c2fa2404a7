// The profilingData stream decoder (what a client of dapprof runs) on arbitrary event bodies: a
// sequence of JSON documents, one per line, decoded in order as one run's events. Each gives
// samples or an error, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/stream_decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dapprof::protocol;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  StreamDecoder decoder;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    const Json body = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) continue;
    auto samples = decoder.decode(body);
    if (!samples && samples.message().empty()) __builtin_trap();
  }
  return 0;
}
