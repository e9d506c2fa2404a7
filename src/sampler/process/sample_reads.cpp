#include "sampler/process/sample_reads.hpp"

#include <algorithm>

namespace dapprof::sampler::process {
namespace {

// Reads closer than this are fetched as one region: copying the bytes between two frames of a
// data stack costs less than another iovec (each one pins its pages again).
constexpr std::size_t kMergeGap = 512;
// Bounds of one plan, whatever a target's stacks look like: a read beyond them is made alone.
constexpr std::size_t kMaxPlanBytes = 1 << 20;
constexpr std::size_t kMaxPlanRegions = 4096;
// A sample that reads more than this many times is pathological (a cycle); stop noting.
constexpr std::size_t kMaxNoted = 1 << 16;

}  // namespace

void SampleReads::begin(const ProcessMemory& memory) {
  active_ = true;
  complete_ = true;
  used_.clear();
  if (!regions_.empty()) fetch(memory);
}

void SampleReads::fetch(const ProcessMemory& memory) {
  std::vector<ProcessMemory::Chunk>& chunks = chunks_;
  chunks.clear();
  for (auto& r : regions_) {
    r.valid = false;
    chunks.push_back({r.addr, data_.data() + r.offset, r.size});
  }
  // A region that is no longer mapped ends the transfer there; the ones after it are fetched
  // again without it (a few times at most).
  std::size_t first = 0;
  for (int attempt = 0; attempt < 4 && first < chunks.size(); ++attempt) {
    const std::span<const ProcessMemory::Chunk> rest(chunks.data() + first, chunks.size() - first);
    const std::size_t done = memory.read_prefix(rest);
    for (std::size_t i = 0; i < done; ++i) regions_[first + i].valid = true;
    first += done + 1;  // skip the one that failed
  }
}

void SampleReads::end() {
  active_ = false;
  std::sort(used_.begin(), used_.end());
  // Built in the storage of the plan before last: a sample allocates nothing here.
  std::vector<Region>& plan = spare_;
  plan.clear();
  std::size_t bytes = 0;
  for (const auto& [addr, size] : used_) {
    if (!plan.empty() && addr <= plan.back().addr + plan.back().size + kMergeGap) {
      auto& last = plan.back();
      const Address end = std::max(last.addr + last.size, addr + size);
      bytes += end - (last.addr + last.size);
      last.size = end - last.addr;
    } else {
      if (plan.size() >= kMaxPlanRegions) break;
      plan.push_back({addr, size, 0, false});
      bytes += size;
    }
    if (bytes > kMaxPlanBytes) {
      plan.pop_back();
      break;
    }
  }
  std::size_t offset = 0;
  for (auto& r : plan) {
    r.offset = offset;
    offset += r.size;
  }
  std::swap(regions_, plan);
  data_.resize(offset);
}

std::vector<std::pair<Address, std::size_t>> SampleReads::plan() const {
  std::vector<std::pair<Address, std::size_t>> out;
  for (const auto& r : regions_) out.emplace_back(r.addr, r.size);
  return out;
}

const std::byte* SampleReads::find(Address addr, std::size_t size) const {
  const Span span = find_region(addr, size);
  return span.data ? span.data + (addr - span.start) : nullptr;
}

SampleReads::Span SampleReads::find_region(Address addr, std::size_t size) const {
  if (!active_ || addr + size < addr) return {};
  const auto holds = [&](const Region& r) {
    return r.valid && addr >= r.addr && addr + size <= r.addr + r.size;
  };
  // A stack's frames are found one after another in one region: try the last one found first.
  if (last_ >= regions_.size() || !holds(regions_[last_])) {
    auto it = std::upper_bound(regions_.begin(), regions_.end(), addr,
                               [](Address a, const Region& r) { return a < r.addr; });
    if (it == regions_.begin() || !holds(*--it)) return {};
    last_ = static_cast<std::size_t>(it - regions_.begin());
  }
  const Region& r = regions_[last_];
  return {data_.data() + r.offset, r.addr, r.size};
}

void SampleReads::note(Address addr, std::size_t size) {
  if (!active_ || size == 0) return;
  // Reads come in runs (a data stack's frames, newest to oldest; a code object read per frame):
  // one that is near the last extends it, which keeps the list short and end()'s sort cheap.
  if (!used_.empty()) {
    auto& [last, last_size] = used_.back();
    const Address end = std::max(last + last_size, addr + size);
    if (addr + size + kMergeGap >= last && addr <= last + last_size + kMergeGap) {
      last = std::min(last, addr);
      last_size = end - last;
      return;
    }
  }
  if (used_.size() < kMaxNoted) used_.emplace_back(addr, size);
}

}  // namespace dapprof::sampler::process
