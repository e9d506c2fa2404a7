#include "adapter/profiling/recording.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "adapter/profiling/output.hpp"

namespace dapprof::adapter::profiling {
namespace {

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

Recording::Recording(std::string name, double rate_hz, std::size_t max_pending_samples,
                     protocol::Encoding encoding, bool show_processes)
    : builder_(encoding), backlog_(max_pending_samples) {
  profile_.name = std::move(name);
  profile_.show_processes = show_processes;
  profile_.interval_us = static_cast<std::int64_t>(1e6 / rate_hz);
  profile_.start_unix_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(started_wall_.time_since_epoch())
          .count();
}

void Recording::add(model::Snapshot&& snapshot) {
  const auto t = std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::microseconds>(snapshot.time - started_).count());
  std::lock_guard lock(mutex_);
  if (snapshot.process) {
    builder_.add_process(*snapshot.process);
    profile_.add_process(*snapshot.process);
  }
  if (snapshot.process_exited) {
    builder_.process_exited(snapshot.pid);
    return;  // not a sample
  }
  for (const auto& thread : snapshot.threads) {
    // The profile interns (and classifies) each frame once; the batch announces it by index.
    // Given the thread, it compares the stack with the thread's previous one before any lookup.
    const auto stack = profile_.add_stack(thread.frames, thread.info);
    if (auto status = builder_.add(thread.info, profile_.stacks()[stack], profile_.frames(), stack);
        !status) {
      // Only a frame-ID space exhausted by collisions gets here; count it, keep going.
      spdlog::warn("profiling: {}", status.message());
      builder_.add_errors(1);
      continue;
    }
    profile_.add_sample(profile_.add_thread(thread.info), stack, t, 1, formats::state_of(thread));
    ++samples_;
  }
  if (!batch_first_) batch_first_ = snapshot.time;
  batch_last_ = snapshot.time;
}

void Recording::sampler_stopped(sampler::StopReason reason, std::string message) {
  std::lock_guard lock(mutex_);
  ending_ = Ending{reason, std::move(message)};
  if (!ended_at_) ended_at_ = Clock::now();
}

bool Recording::flush(Clock::time_point now, std::uint64_t sampler_errors) {
  std::lock_guard lock(mutex_);
  if (sampler_errors > errors_reported_) {
    builder_.add_errors(sampler_errors - errors_reported_);
    errors_reported_ = sampler_errors;
  }
  if (builder_.empty()) return false;
  auto batch = builder_.take(ms_between(last_flush_, now));
  last_flush_ = now;
  if (batch_first_ && batch.sample_count() > 0) {
    batch.start_time_ms = epoch_ms(*batch_first_);
    batch.end_time_ms = epoch_ms(*batch_last_);
  }
  batch_first_.reset();
  batch_last_.reset();
  backlog_.push(std::move(batch));
  return true;
}

std::optional<protocol::ProfilingBatch> Recording::take_batch() {
  std::lock_guard lock(mutex_);
  return backlog_.take();
}

void Recording::mark_ended(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (!ended_at_) ended_at_ = now;
}

std::optional<Recording::Ending> Recording::ending() const {
  std::lock_guard lock(mutex_);
  return ending_;
}

protocol::ProfilingSummary Recording::summary(bool hide_debugger) const {
  std::lock_guard lock(mutex_);
  protocol::ProfilingSummary s;
  s.dropped_sample_count = backlog_.dropped_total();
  s.sample_count = samples_ - s.dropped_sample_count;  // delivered
  s.duration_ms = ms_between(started_, ended_at_.value_or(Clock::now()));
  s.error_count = errors_reported_;
  s.top_functions = top_functions(profile_, hide_debugger);
  return s;
}

formats::Profile Recording::snapshot_profile() const {
  std::lock_guard lock(mutex_);
  formats::Profile copy = profile_;
  copy.duration_us =
      static_cast<std::int64_t>(1000 * ms_between(started_, ended_at_.value_or(Clock::now())));
  return copy;
}

double Recording::epoch_ms(Clock::time_point t) const {
  const auto wall =
      started_wall_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(t - started_);
  return std::chrono::duration<double, std::milli>(wall.time_since_epoch()).count();
}

}  // namespace dapprof::adapter::profiling
