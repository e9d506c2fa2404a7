#pragma once
// The samples of a profile, a few bytes each: an hour at 1 kHz is 3.6 million of them, which as
// plain structs would be most of a recording's memory. They are encoded in order into
// append-only blocks; a full block is immutable and shared by every copy of the store, so copying
// a profile (the daemon's snapshot of a run still sampling) copies at most one block of data.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace dapprof::formats {

// What a thread was doing when it was sampled, as the sampler saw it; not known for a sample that
// came from elsewhere (a test's, a rewritten profile keeps it).
struct ThreadState {
  bool known = false;
  bool active = false;  // running, not waiting in a system call or on a lock
  bool gil = false;     // holding the GIL
  bool operator==(const ThreadState&) const = default;
};

struct Sample {
  std::uint32_t thread = 0;  // index into Profile::threads()
  std::uint32_t stack = 0;   // index into Profile::stacks()
  std::int64_t time_us = 0;  // since the recording started
  double weight = 1;         // how many samples this one stands for
  ThreadState state{};
  bool operator==(const Sample&) const = default;
};

class SampleStore {
 public:
  // Bytes of one block: large enough that the pointers to full blocks are a small part of the
  // store, small enough that copying the block still being filled is cheap.
  static constexpr std::size_t kBlockBytes = 16 * 1024;

  // Decodes the samples in the order they were added. Invalidated by add().
  class Iterator {
   public:
    using iterator_concept = std::forward_iterator_tag;
    // The sample is decoded into the iterator, so a copy does not refer to the same object.
    using iterator_category = std::input_iterator_tag;
    using value_type = Sample;
    using difference_type = std::ptrdiff_t;
    using reference = const Sample&;
    using pointer = const Sample*;

    Iterator() = default;
    reference operator*() const { return current_; }
    pointer operator->() const { return &current_; }
    Iterator& operator++();
    Iterator operator++(int) {
      Iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }

   private:
    friend class SampleStore;
    Iterator(const SampleStore& store, std::size_t index);
    void decode();

    const SampleStore* store_ = nullptr;
    std::size_t index_ = 0;  // of current_ among the store's samples
    std::size_t block_ = 0;
    const std::uint8_t* next_ = nullptr;  // the next sample's encoding in block_
    const std::uint8_t* block_end_ = nullptr;
    Sample current_;
  };

  void add(const Sample& sample);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Iterator begin() const { return Iterator(*this, 0); }
  Iterator end() const { return Iterator(*this, size_); }

  // Kept as samples are added, so that neither needs a pass over them.
  double total_weight() const { return total_weight_; }  // summed in the order added
  std::optional<std::int64_t> latest_time_us() const;

  // Encoded bytes, for benchmarks and tests of the encoding's size.
  std::size_t encoded_bytes() const;

 private:
  using Block = std::vector<std::uint8_t>;
  std::span<const std::uint8_t> block(std::size_t index) const;

  std::vector<std::shared_ptr<const Block>> full_;
  Block open_;  // being filled; sealed into full_ when the next sample does not fit
  std::size_t size_ = 0;
  double total_weight_ = 0;
  std::int64_t previous_time_us_ = 0;  // times are encoded as the difference from the previous
  std::int64_t latest_time_us_ = 0;    // the largest time, valid if size_ > 0
};

}  // namespace dapprof::formats
