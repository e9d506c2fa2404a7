#include "sampler/native/mini_debug_info.hpp"

#include <fmt/format.h>
#include <lzma.h>

#include <algorithm>
#include <memory>

namespace dapprof::sampler::native {

Result<std::vector<std::byte>> xz_decompress(std::span<const std::byte> packed, std::size_t limit) {
  lzma_stream stream = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&stream, UINT64_MAX, 0) != LZMA_OK)
    return Error{"cannot start liblzma's decoder"};
  const std::unique_ptr<lzma_stream, decltype(&lzma_end)> end(&stream, &lzma_end);
  std::vector<std::byte> out(std::max<std::size_t>(packed.size() * 4, 4096));
  stream.next_in = reinterpret_cast<const std::uint8_t*>(packed.data());
  stream.avail_in = packed.size();
  std::size_t used = 0;
  for (;;) {
    if (used == out.size()) {
      if (out.size() >= limit) return Error{fmt::format("more than {} bytes unpacked", limit)};
      out.resize(std::min(out.size() * 2, limit));
    }
    stream.next_out = reinterpret_cast<std::uint8_t*>(out.data() + used);
    stream.avail_out = out.size() - used;
    const lzma_ret ret = lzma_code(&stream, LZMA_FINISH);
    used = out.size() - stream.avail_out;
    if (ret == LZMA_STREAM_END) break;
    if (ret != LZMA_OK && ret != LZMA_BUF_ERROR)
      return Error{fmt::format("not a valid xz stream (liblzma error {})", static_cast<int>(ret))};
    // LZMA_BUF_ERROR with output space left: the input ended before the stream did.
    if (ret == LZMA_BUF_ERROR && stream.avail_out != 0) return Error{"truncated xz stream"};
  }
  out.resize(used);
  return out;
}

Result<ElfSymbols> open_mini_debug_info(const ElfSymbols& module, const std::string& name) {
  const auto packed = module.section(".gnu_debugdata");
  if (packed.empty()) return Error{fmt::format("{} has no MiniDebugInfo", name)};
  auto elf = xz_decompress(packed);
  if (!elf) return Error{fmt::format("{}'s MiniDebugInfo: {}", name, elf.message())};
  return ElfSymbols::from_bytes(std::move(*elf), name + " (.gnu_debugdata)");
}

}  // namespace dapprof::sampler::native
