// Every profiling request's argument parser on arbitrary JSON: an error naming the field or
// arguments that encode and parse back to themselves; never a crash or an exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/messages.hpp"

namespace {

template <typename Arguments>
void check(const dapprof::protocol::Json& json) {
  auto parsed = Arguments::parse(json);
  if (!parsed) {
    if (parsed.message().empty()) __builtin_trap();  // an error must say what is wrong
    return;
  }
  auto again = Arguments::parse(dapprof::protocol::to_json(*parsed));
  if (!again || !(*again == *parsed)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dapprof::protocol;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  check<StartProfilingArguments>(json);
  check<StopProfilingArguments>(json);
  check<ExportProfileArguments>(json);
  return 0;
}
