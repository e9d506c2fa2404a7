#pragma once
// The bytes one sample reads, fetched at its start in one system call. A running program's
// stacks change little between samples, so the regions a sample used are, merged, the next
// sample's plan: fetched together with one process_vm_readv, and every read the sample makes is
// served from them where they cover it. Besides saving system calls, this makes a sample's bytes
// (nearly) one instant's: they are copied in one call rather than over a dozen.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sampler/process/memory.hpp"

namespace dapprof::sampler::process {

class SampleReads {
 public:
  // Fetches the plan (what the previous sample used). Unreadable regions (a freed frame) are
  // dropped, the rest kept: reads they would have served go to the process instead.
  void begin(const ProcessMemory& memory);
  // What this sample used becomes the next plan.
  void end();

  // The fetched bytes of [addr, addr + size), or nullptr if no region holds all of them.
  const std::byte* find(Address addr, std::size_t size) const;
  // The same, and the whole fetched region that holds them: its bytes and where it starts.
  struct Span {
    const std::byte* data = nullptr;
    Address start = 0;
    std::size_t size = 0;
  };
  Span find_region(Address addr, std::size_t size) const;
  // A read of this sample, whether served or not: the next plan covers it.
  void note(Address addr, std::size_t size);
  // A read of this sample that the fetched bytes did not serve (made later, so of a later
  // instant than the rest).
  void missed() {
    if (active_) complete_ = false;
  }
  // Whether every read of the last sample begun was served from its fetch.
  bool complete() const { return complete_; }

  // The next sample's plan, for tests and benchmarks.
  std::vector<std::pair<Address, std::size_t>> plan() const;

 private:
  struct Region {
    Address addr = 0;
    std::size_t size = 0;
    std::size_t offset = 0;  // in data_
    bool valid = false;
  };
  void fetch(const ProcessMemory& memory);

  bool active_ = false;
  bool complete_ = true;
  std::vector<Region> regions_;  // sorted by address, disjoint
  std::vector<std::byte> data_;
  std::vector<std::pair<Address, std::size_t>> used_;  // this sample's reads
  mutable std::size_t last_ = 0;                       // the region find() last served from
  // Scratch kept from sample to sample.
  std::vector<Region> spare_;
  std::vector<ProcessMemory::Chunk> chunks_;
};

}  // namespace dapprof::sampler::process
