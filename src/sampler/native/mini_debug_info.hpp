#pragma once
// MiniDebugInfo: the symbol table of a stripped module's static functions, as an xz-compressed
// ELF file in its .gnu_debugdata section (what Fedora and RHEL add to every binary, so that
// stacks name functions without debug packages). Decompressed with liblzma.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "sampler/native/elf_symbols.hpp"

namespace dapprof::sampler::native {

// The whole of an .xz stream; an error if it is not one, or larger than `limit` once unpacked.
Result<std::vector<std::byte>> xz_decompress(std::span<const std::byte> packed,
                                             std::size_t limit = std::size_t{256} << 20);

// The ELF file in `module`'s .gnu_debugdata; an error if it has none or it cannot be read.
Result<ElfSymbols> open_mini_debug_info(const ElfSymbols& module, const std::string& name);

}  // namespace dapprof::sampler::native
