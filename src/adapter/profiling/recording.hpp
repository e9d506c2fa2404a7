#pragma once
// The data of one profiling run, shared by the sampler's thread (which adds snapshots) and the
// session's strand (which flushes batches, answers stopProfiling and exportProfile). One frame
// store: the whole-run profile, whose frames the batches announce by ID.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "formats/profile.hpp"
#include "model/snapshot.hpp"
#include "protocol/backlog.hpp"
#include "protocol/batch.hpp"
#include "protocol/messages.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::adapter::profiling {

using Clock = std::chrono::steady_clock;

class Recording {
 public:
  // show_processes: the run samples subprocesses (formats::Profile::show_processes).
  Recording(std::string name, double rate_hz, std::size_t max_pending_samples,
            protocol::Encoding encoding = protocol::Encoding::Frames, bool show_processes = false);

  // The sampler's thread.
  void add(model::Snapshot&& snapshot);
  void sampler_stopped(sampler::StopReason reason, std::string message);

  // The strand. Closes the batch being built into the backlog (with the sampler's error count
  // so far); false when there was nothing to send.
  bool flush(Clock::time_point now, std::uint64_t sampler_errors);
  std::optional<protocol::ProfilingBatch> take_batch();
  // Sampling is over at `now` unless the sampler said so earlier.
  void mark_ended(Clock::time_point now);

  struct Ending {
    sampler::StopReason reason = sampler::StopReason::Requested;
    std::string message;
  };
  // How the sampler ended, once it has.
  std::optional<Ending> ending() const;

  protocol::ProfilingSummary summary(bool hide_debugger) const;
  // The whole run so far, for a writer that must not hold the sampler up.
  formats::Profile snapshot_profile() const;

 private:
  double epoch_ms(Clock::time_point t) const;

  const Clock::time_point started_ = Clock::now();
  // Wall-clock anchor: sample times are steady-clock; clients want epoch milliseconds.
  const std::chrono::system_clock::time_point started_wall_ = std::chrono::system_clock::now();

  mutable std::mutex mutex_;  // guards everything below
  protocol::BatchBuilder builder_;
  protocol::Backlog backlog_;
  formats::Profile profile_;
  std::uint64_t samples_ = 0;  // stacks taken, delivered or not
  std::uint64_t errors_reported_ = 0;
  std::optional<Clock::time_point> batch_first_, batch_last_;
  Clock::time_point last_flush_ = started_;
  std::optional<Clock::time_point> ended_at_;
  std::optional<Ending> ending_;
};

}  // namespace dapprof::adapter::profiling
