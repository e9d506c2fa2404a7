#pragma once
// The client side of profilingData: resolves frame IDs (and, in a run started with `stacks`,
// stack IDs) against those announced so far and rebuilds every stack (root first) with its
// thread. Used by tests and integration tests; it also
// serves as the reference for client implementations (docs/PROFILING.md).
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "model/frame.hpp"
#include "model/thread_info.hpp"
#include "protocol/batch.hpp"
#include "protocol/json.hpp"

namespace dapprof::protocol {

struct DecodedSample {
  std::vector<model::Frame> stack;          // root first
  std::optional<model::ThreadInfo> thread;  // absent when the event has no threadIds
  // Consecutive samples it stands for: 1 but for a run of stackIds, which stays one entry so
  // that what is decoded is as small as what was sent.
  std::uint64_t count = 1;
};

class StreamDecoder {
 public:
  // Decodes one profilingData body, in the order the events arrived. On error (an unknown or
  // twice-defined frame or stack ID, a malformed field) nothing of this body is kept; the message
  // names the offending field.
  Result<std::vector<DecodedSample>> decode(const Json& body);

  std::size_t frame_count() const { return frames_.size(); }
  std::size_t stack_count() const { return stacks_.size(); }
  const std::unordered_map<ThreadId, model::ThreadInfo>& threads() const { return threads_; }
  std::uint64_t event_count() const { return events_; }
  std::uint64_t sample_count() const { return samples_; }
  std::uint64_t dropped_sample_count() const { return dropped_; }
  std::uint64_t error_count() const { return errors_; }
  double duration_ms() const { return duration_ms_; }

 private:
  std::unordered_map<FrameId, model::Frame> frames_;
  std::unordered_map<StackId, std::vector<FrameId>> stacks_;
  std::unordered_map<ThreadId, model::ThreadInfo> threads_;
  std::uint64_t events_ = 0, samples_ = 0, dropped_ = 0, errors_ = 0;
  double duration_ms_ = 0;
};

}  // namespace dapprof::protocol
