#pragma once
// A made-up address space for the readers of a target's memory: regions of bytes at chosen
// addresses, served through ProcessMemory's Source seam as a process's memory would be. A read
// must fall inside one region whole, as process_vm_readv needs the pages mapped.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "sampler/process/memory.hpp"

namespace dapprof::fake {

class AddressSpace final : public sampler::process::ProcessMemory::Source {
 public:
  using Address = sampler::process::Address;
  using Chunk = sampler::process::ProcessMemory::Chunk;

  // `bytes` must outlive this; regions must not overlap.
  void map(Address at, std::span<const std::byte> bytes) { regions_.push_back({at, bytes}); }

  std::size_t copy(std::span<const Chunk> chunks) const override {
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const std::byte* from = find(chunks[i].addr, chunks[i].size);
      if (!from) return i;
      if (chunks[i].size) std::memcpy(chunks[i].out, from, chunks[i].size);
    }
    return chunks.size();
  }

 private:
  struct Region {
    Address at;
    std::span<const std::byte> bytes;
  };
  const std::byte* find(Address addr, std::size_t size) const {
    for (const auto& r : regions_) {
      if (addr >= r.at && addr - r.at <= r.bytes.size() && size <= r.bytes.size() - (addr - r.at))
        return r.bytes.data() + (addr - r.at);
    }
    return nullptr;
  }
  std::vector<Region> regions_;
};

}  // namespace dapprof::fake
