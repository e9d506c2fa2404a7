#include "sampler/python/frame_reader.hpp"

namespace dapprof::sampler::python {
namespace {

constexpr std::uint64_t kWindow = 16 * 1024;
constexpr std::uint64_t kPage = 4096;

std::uint64_t frame_read_size(const Layout& l) {
  if (l.at_least(3, 11)) return l.frame_size;
  return std::max({l.frame_previous, l.frame_code, l.frame_lasti}) + 8;
}

}  // namespace

FrameReader::FrameReader(const Objects& objects)
    : objects_(objects),
      data_stack_(objects.layout().at_least(3, 11)),
      size_(frame_read_size(objects.layout())) {}

FrameReader::Walk FrameReader::begin() {
  window_.clear();
  window_start_ = 0;
  region_ = {};
  region_start_ = 0;
  run_start_ = run_end_ = 0;
  return Walk(*this);
}

void FrameReader::end() {
  if (run_end_ > run_start_) objects_.memory().note(run_start_, run_end_ - run_start_);
  run_start_ = run_end_ = 0;
}

Result<const std::byte*> FrameReader::read_object(Address frame, std::byte* out) const {
  // A thread's stack changes little between samples, so the sample's bytes (the frames read last
  // time) usually hold these too.
  if (auto s = objects_.memory().read(frame, out, size_); !s) return s.error();
  return static_cast<const std::byte*>(out);
}

Result<const std::byte*> FrameReader::read_elsewhere(Address frame, std::byte* out) {
  const auto& mem = objects_.memory();
  if (region_ = mem.cached_region(frame, size_, region_start_); !region_.empty())
    return region_.data() + (frame - region_start_);
  if (frame >= window_start_ && frame + size_ <= window_start_ + window_.size()) {
    return static_cast<const std::byte*>(window_.data() + (frame - window_start_));
  }
  // A frame the sample's bytes lack (the stack grew, or the first sample): frames are contiguous
  // in the thread's data stack, older frames below newer ones, so read the window that ends with
  // this frame; if the memory below is not mapped, just the part of it on the frame's own page.
  // The next sample fetches the frames themselves (noted), not the window.
  const Address end = frame + size_;
  for (Address start : {end > kWindow ? (end - kWindow) & ~(kPage - 1) : 0, frame & ~(kPage - 1)}) {
    window_.resize(end - start);
    if (mem.read_ahead(start, window_.data(), window_.size())) {
      window_start_ = start;
      return static_cast<const std::byte*>(window_.data() + (frame - start));
    }
  }
  window_.clear();
  window_start_ = 0;
  if (auto s = mem.read_ahead(frame, out, size_); !s) return s.error();
  return static_cast<const std::byte*>(out);
}

}  // namespace dapprof::sampler::python
