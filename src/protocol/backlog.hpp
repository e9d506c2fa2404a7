#pragma once
// Batches waiting for a client that reads more slowly than they are produced. Pending batches are
// merged into one; beyond a bound the oldest samples are dropped, and counted, while frame, stack
// and thread definitions are always kept (each is announced only once per run).
#include <cstddef>
#include <cstdint>
#include <optional>

#include "protocol/batch.hpp"

namespace dapprof::protocol {

// Samples waiting for a slow client beyond which the oldest are dropped (and counted): at 1000 Hz
// on ten busy threads, five seconds of data; a few tens of MiB at most. The daemon's default
// (--max-pending-samples).
inline constexpr std::size_t kDefaultMaxPendingSamples = 50'000;

class Backlog {
 public:
  explicit Backlog(std::size_t max_samples) : max_samples_(max_samples) {}

  // Appends a batch. If the pending samples would exceed max_samples, the samples already pending
  // are dropped first: a live view wants the newest ones.
  void push(ProfilingBatch batch);
  // Everything pending, as one batch for one profilingData event; nullopt when nothing is.
  std::optional<ProfilingBatch> take();

  bool empty() const { return !pending_.has_value(); }
  std::size_t pending_samples() const { return pending_ ? pending_->sample_count() : 0; }
  std::uint64_t dropped_total() const { return dropped_total_; }  // over the backlog's lifetime

 private:
  std::size_t max_samples_;
  std::optional<ProfilingBatch> pending_;
  std::uint64_t dropped_total_ = 0;
};

}  // namespace dapprof::protocol
