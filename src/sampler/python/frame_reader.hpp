#pragma once
// The frame structs of one thread's stack, in the order the stack walk follows them (innermost
// first): where the sample's bytes already hold them, without copying, else (3.11+) from a window
// of the thread's data stack read in one go. What a walk read is noted for the next sample's plan.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/result.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

class FrameReader {
 public:
  explicit FrameReader(const Objects& objects);

  // How many bytes of a frame read() gives: the whole struct on 3.11+, only up to the last field
  // the walk needs before (a PyFrameObject is 368 bytes or more).
  std::uint64_t size() const { return size_; }

  // One walk's reads: nothing of the last walk is assumed to hold, and when the walk ends, however
  // it ends, what it read is noted for the next sample's plan.
  class Walk {
   public:
    explicit Walk(FrameReader& reader) : reader_(reader) {}
    Walk(const Walk&) = delete;
    Walk& operator=(const Walk&) = delete;
    ~Walk() { reader_.end(); }

   private:
    FrameReader& reader_;
  };
  [[nodiscard]] Walk begin();

  // The bytes of the frame at `frame`, valid until the next read; `out` (size() bytes) receives
  // them when they are nowhere already.
  Result<const std::byte*> read(Address frame, std::byte* out) {
    if (!data_stack_) return read_object(frame, out);
    note(frame);
    // The frames of a deep stack are most of a sample's work and lie one after another in one
    // region of the sample's bytes: the test here saves a call per frame (SampleReads keeps the
    // same hint, behind ProcessMemory::cached_region).
    if (frame >= region_start_ && frame + size_ <= region_start_ + region_.size())
      return region_.data() + (frame - region_start_);
    return read_elsewhere(frame, out);
  }

 private:
  // Before 3.11 frames are heap objects, one read each.
  Result<const std::byte*> read_object(Address frame, std::byte* out) const;
  // Another region of the sample's bytes, the window, or a read of a new window.
  Result<const std::byte*> read_elsewhere(Address frame, std::byte* out);
  // Notes the frames of the run in progress for the next sample's plan.
  void end();
  // Frames read one after another are noted as one run, each at its end (as SampleReads would
  // merge them, without a call per frame).
  void note(Address frame) {
    if (frame + size_ + kNoteGap >= run_start_ && frame <= run_end_ + kNoteGap) {
      run_start_ = std::min(run_start_, frame);
      run_end_ = std::max(run_end_, frame + size_);
      return;
    }
    end();
    run_start_ = frame;
    run_end_ = frame + size_;
  }

  static constexpr std::uint64_t kNoteGap = 256;

  const Objects& objects_;
  bool data_stack_;  // 3.11+: frames lie in each thread's data stack
  std::uint64_t size_;
  std::span<const std::byte> region_;  // of the sample's bytes, where the last frame was found
  Address region_start_ = 0;
  std::vector<std::byte> window_;
  Address window_start_ = 0;
  Address run_start_ = 0;
  Address run_end_ = 0;
};

}  // namespace dapprof::sampler::python
