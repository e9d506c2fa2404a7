#pragma once
// The header of an ELF file's unwind table index (.eh_frame_hdr): where its sorted table of
// (initial location, FDE address) pairs starts and how many it holds. Read by the symbolizer
// (function starts of stripped code) and by the unwinder (libunwind's remote table search).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace dapprof::sampler::native {

struct EhFrameHdr {
  std::uint64_t table_offset = 0;  // from the start of .eh_frame_hdr
  std::uint64_t count = 0;         // pairs of 4-byte values, each relative to the header
};

// `hdr`: the bytes of .eh_frame_hdr (PT_GNU_EH_FRAME). nullopt unless it is version 1 with
// fixed-size encodings and a datarel|sdata4 table (what every linker writes, and all libunwind's
// table search reads), and the table fits in it.
std::optional<EhFrameHdr> parse_eh_frame_hdr(std::span<const std::byte> hdr);

}  // namespace dapprof::sampler::native
