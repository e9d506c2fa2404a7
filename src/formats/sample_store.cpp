#include "formats/sample_store.hpp"

#include <algorithm>
#include <cstring>

namespace dapprof::formats {
namespace {

// One sample: varint(zigzag(time - previous time)), varint(thread << 4 | state << 1 | weighted),
// varint(stack), then the weight's 8 bytes only if weighted (weight != 1). A sample of a thread
// among the first 8, of a stack among the first 128 and 64 to 8191 µs after the previous one takes
// 4 bytes.
constexpr std::size_t kMaxVarint = 10;
constexpr std::size_t kMaxEncoded = 3 * kMaxVarint + sizeof(double);

std::uint8_t* put_varint(std::uint8_t* out, std::uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<std::uint8_t>(value | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<std::uint8_t>(value);
  return out;
}

// The store wrote every block, so the input is trusted: no bounds to check.
std::uint64_t get_varint(const std::uint8_t*& in) {
  std::uint64_t value = 0;
  for (unsigned shift = 0;; shift += 7) {
    const std::uint8_t byte = *in++;
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return value;
  }
}

// Differences are taken modulo 2^64, so any two times have one (no signed overflow).
std::uint64_t zigzag(std::uint64_t difference) {
  return (difference << 1) ^ (0 - (difference >> 63));
}
std::uint64_t unzigzag(std::uint64_t value) { return (value >> 1) ^ (0 - (value & 1)); }

constexpr unsigned kStateBits = 3;
std::uint64_t state_bits(const ThreadState& s) {
  return (s.known ? 1u : 0u) | (s.active ? 2u : 0u) | (s.gil ? 4u : 0u);
}
ThreadState state_of(std::uint64_t bits) {
  return {.known = (bits & 1) != 0, .active = (bits & 2) != 0, .gil = (bits & 4) != 0};
}

}  // namespace

void SampleStore::add(const Sample& sample) {
  std::uint8_t encoded[kMaxEncoded];
  const bool weighted = sample.weight != 1;
  std::uint8_t* end = put_varint(encoded, zigzag(static_cast<std::uint64_t>(sample.time_us) -
                                                 static_cast<std::uint64_t>(previous_time_us_)));
  end = put_varint(end, (static_cast<std::uint64_t>(sample.thread) << (kStateBits + 1)) |
                            (state_bits(sample.state) << 1) | (weighted ? 1 : 0));
  end = put_varint(end, sample.stack);
  if (weighted) {
    std::memcpy(end, &sample.weight, sizeof sample.weight);
    end += sizeof sample.weight;
  }
  const auto length = static_cast<std::size_t>(end - encoded);
  if (open_.size() + length > kBlockBytes) {
    full_.push_back(std::make_shared<const Block>(std::move(open_)));
    open_ = Block{};
  }
  if (open_.capacity() == 0) open_.reserve(kBlockBytes);
  open_.insert(open_.end(), encoded, end);

  latest_time_us_ = size_ == 0 ? sample.time_us : std::max(latest_time_us_, sample.time_us);
  previous_time_us_ = sample.time_us;
  total_weight_ += sample.weight;
  ++size_;
}

std::optional<std::int64_t> SampleStore::latest_time_us() const {
  if (size_ == 0) return std::nullopt;
  return latest_time_us_;
}

std::size_t SampleStore::encoded_bytes() const {
  std::size_t bytes = open_.size();
  for (const auto& block : full_) bytes += block->size();
  return bytes;
}

std::span<const std::uint8_t> SampleStore::block(std::size_t index) const {
  if (index < full_.size()) return *full_[index];
  return open_;
}

SampleStore::Iterator::Iterator(const SampleStore& store, std::size_t index)
    : store_(&store), index_(index) {
  if (index_ >= store.size_) return;  // end(): nothing to decode
  const auto first = store.block(0);
  next_ = first.data();
  block_end_ = first.data() + first.size();
  current_.time_us = 0;  // the first difference is from 0
  decode();
}

SampleStore::Iterator& SampleStore::Iterator::operator++() {
  if (++index_ < store_->size_) decode();
  return *this;
}

void SampleStore::Iterator::decode() {
  // A sample never spans blocks, so the next one starts a new block where this one ends.
  while (next_ == block_end_) {
    const auto block = store_->block(++block_);
    next_ = block.data();
    block_end_ = block.data() + block.size();
  }
  current_.time_us = static_cast<std::int64_t>(static_cast<std::uint64_t>(current_.time_us) +
                                               unzigzag(get_varint(next_)));
  const std::uint64_t thread = get_varint(next_);
  current_.thread = static_cast<std::uint32_t>(thread >> (kStateBits + 1));
  current_.state = state_of((thread >> 1) & ((1u << kStateBits) - 1));
  current_.stack = static_cast<std::uint32_t>(get_varint(next_));
  current_.weight = 1;
  if (thread & 1) {
    std::memcpy(&current_.weight, next_, sizeof current_.weight);
    next_ += sizeof current_.weight;
  }
}

}  // namespace dapprof::formats
