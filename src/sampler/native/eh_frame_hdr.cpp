#include "sampler/native/eh_frame_hdr.hpp"

#include <cstring>

namespace dapprof::sampler::native {
namespace {

constexpr std::uint8_t kOmit = 0xff;
constexpr std::uint8_t kDatarelSdata4 = 0x3b;  // DW_EH_PE_datarel | DW_EH_PE_sdata4
constexpr std::uint64_t kPairSize = 8;

// DW_EH_PE encodings used by .eh_frame_hdr: only the fixed-size ones are read.
std::size_t encoded_size(std::uint8_t enc) {
  switch (enc & 0x0f) {
    case 0x02:  // udata2
    case 0x0a:  // sdata2
      return 2;
    case 0x03:  // udata4
    case 0x0b:  // sdata4
      return 4;
    case 0x04:  // udata8
    case 0x0c:  // sdata8
      return 8;
    default:
      return 0;
  }
}

}  // namespace

std::optional<EhFrameHdr> parse_eh_frame_hdr(std::span<const std::byte> hdr) {
  // version, eh_frame_ptr_enc, fde_count_enc, table_enc; eh_frame_ptr; fde_count; the table.
  if (hdr.size() < 4) return std::nullopt;
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(hdr[i]); };
  if (byte(0) != 1 || byte(3) != kDatarelSdata4 || byte(1) == kOmit || byte(2) == kOmit)
    return std::nullopt;
  const std::size_t ptr_size = encoded_size(byte(1));
  const std::size_t count_size = encoded_size(byte(2));
  if (ptr_size == 0 || count_size == 0) return std::nullopt;
  const std::uint64_t count_at = 4 + ptr_size;
  EhFrameHdr out;
  out.table_offset = count_at + count_size;
  if (out.table_offset > hdr.size()) return std::nullopt;
  std::memcpy(&out.count, hdr.data() + count_at, count_size);  // little-endian
  if (out.count > (hdr.size() - out.table_offset) / kPairSize) return std::nullopt;
  return out;
}

}  // namespace dapprof::sampler::native
