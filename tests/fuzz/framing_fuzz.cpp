// The DAP frame decoder on arbitrary bytes in arbitrary chunkings: it must give messages, ask for
// more, or fail once with a message, never crash, hang or hold more than the limit allows. The
// first byte chooses the chunk sizes, so the fuzzer explores fragmentation too.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "protocol/framing.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dapprof::protocol;
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  FrameDecoder decoder(4096);  // small, so that the limit is reached too
  bool failed = false;
  for (std::size_t at = 0; at < bytes.size() && !failed; at += chunk) {
    decoder.feed(bytes.substr(at, chunk));
    for (;;) {
      const DecodeStep step = decoder.next();
      if (std::holds_alternative<NeedMore>(step)) break;
      if (const auto* error = std::get_if<FramingError>(&step)) {
        if (error->message.empty()) __builtin_trap();  // a failure must say why
        failed = true;
        break;
      }
      // A decoded message encodes again (the proxy forwards what it decodes).
      const auto& message = std::get<Json>(step);
      if (encode_frame(message).empty()) __builtin_trap();
    }
  }
  return 0;
}
