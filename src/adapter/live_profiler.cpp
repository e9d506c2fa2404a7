// Live profiling of a session's debuggee: the sampler runs on its own thread and adds each
// snapshot to the run's batch builder and whole-run recording; a flusher thread closes a batch
// every batchIntervalMs and queues it in a bounded backlog; the session pulls batches from the
// backlog on its strand when the client's connection has room.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "adapter/profile_file.hpp"
#include "adapter/profiler.hpp"
#include "formats/profile.hpp"
#include "formats/writers.hpp"
#include "protocol/backlog.hpp"
#include "protocol/batch.hpp"
#include "protocol/sampling.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::adapter {
namespace {

using Clock = std::chrono::steady_clock;
using protocol::StoppedReason;

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// State shared by the sampling thread, the flusher thread and the session's strand.
struct Run {
  Run(std::uint64_t run_id, const protocol::StartProfilingArguments& run_arguments,
      ProfilerLink run_link, std::size_t max_pending_samples)
      : id(run_id),
        arguments(run_arguments),
        link(std::move(run_link)),
        backlog(max_pending_samples) {}

  const std::uint64_t id;
  const protocol::StartProfilingArguments arguments;
  const ProfilerLink link;
  // Wall-clock anchor: sample times are steady-clock; clients want epoch milliseconds.
  const Clock::time_point started = Clock::now();
  const std::chrono::system_clock::time_point started_wall = std::chrono::system_clock::now();

  std::mutex mutex;  // guards everything below
  std::condition_variable wake;
  protocol::BatchBuilder builder;
  protocol::Backlog backlog;
  formats::Profile recording;
  std::uint64_t samples = 0;  // stacks taken, delivered or not
  std::uint64_t errors_reported = 0;
  std::optional<Clock::time_point> batch_first, batch_last;
  Clock::time_point last_flush = started;
  Clock::time_point ended_at{};
  bool sampling_over = false;  // the sampler's on_stop has run
  bool flusher_stop = false;
  sampler::StopReason stop_reason = sampler::StopReason::Requested;
  std::string stop_message;

  std::atomic<bool> data_signalled{false};

  // Set by the attaching thread, taken on the strand.
  std::optional<Result<std::unique_ptr<sampler::Sampler>>> attached;
  bool abandoned = false;  // the session gave up on this run while it was attaching

  // Strand only.
  std::unique_ptr<sampler::Sampler> sampler;
  std::thread flusher;
  std::string python_version;

  double epoch_ms(Clock::time_point t) const {
    const auto wall = started_wall + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                         t - started);
    return std::chrono::duration<double, std::milli>(wall.time_since_epoch()).count();
  }

  void on_snapshot(model::Snapshot&& snapshot) {
    std::lock_guard lock(mutex);
    if (auto status = builder.add(snapshot); !status) {
      // Only a frame-ID space exhausted by collisions gets here; count it, keep going.
      spdlog::warn("profiling: {}", status.message());
      builder.add_errors(1);
      return;
    }
    recording.add_snapshot(snapshot, started);
    samples += snapshot.threads.size();
    if (!batch_first) batch_first = snapshot.time;
    batch_last = snapshot.time;
  }

  void on_sampler_stop(sampler::StopReason reason, const std::string& message) {
    {
      std::lock_guard lock(mutex);
      sampling_over = true;
      stop_reason = reason;
      stop_message = message;
      ended_at = Clock::now();
    }
    wake.notify_all();
    if (reason != sampler::StopReason::Requested && link.run_ended) link.run_ended(id);
  }

  // Closes the pending batch into the backlog. Caller holds the mutex.
  bool flush_locked(Clock::time_point now, std::uint64_t sampler_errors) {
    if (sampler_errors > errors_reported) {
      builder.add_errors(sampler_errors - errors_reported);
      errors_reported = sampler_errors;
    }
    if (builder.empty()) return false;
    auto batch = builder.take(ms_between(last_flush, now));
    last_flush = now;
    if (batch_first && !batch.samples.empty()) {
      batch.start_time_ms = epoch_ms(*batch_first);
      batch.end_time_ms = epoch_ms(*batch_last);
    }
    batch_first.reset();
    batch_last.reset();
    backlog.push(std::move(batch));
    return true;
  }

  void signal_data() {
    if (!data_signalled.exchange(true) && link.data_ready) link.data_ready();
  }

  void flusher_loop() {
    const auto interval = std::chrono::milliseconds(arguments.batch_interval_ms);
    auto next = started + interval;
    std::unique_lock lock(mutex);
    while (!flusher_stop) {
      wake.wait_until(lock, next, [this] { return flusher_stop || sampling_over; });
      if (flusher_stop || sampling_over) break;  // the final flush happens on the strand
      const auto now = Clock::now();
      if (flush_locked(now, sampler->stats().errors)) {
        lock.unlock();
        signal_data();
        lock.lock();
      }
      next += interval;
      if (next < now) next = now + interval;  // fell behind (suspended machine): don't burst
    }
  }
};

class LiveProfiler final : public Profiler {
 public:
  explicit LiveProfiler(std::size_t max_pending_samples)
      : max_pending_samples_(max_pending_samples) {}
  ~LiveProfiler() override { halt(); }

  void start(const protocol::StartProfilingArguments& arguments, pid_t target,
             ProfilerLink link) override {
    halt();
    auto run =
        std::make_shared<Run>(next_run_id_++, arguments, std::move(link), max_pending_samples_);
    run->recording.name = fmt::format("python (pid {})", target);
    run->recording.interval_us = static_cast<std::int64_t>(1e6 / arguments.rate);
    const sampler::SamplerOptions options{.sampling = protocol::sampling_settings(arguments)};
    target_ = target;
    run_ = run;
    starting_ = true;
    // Detached: a session that ends meanwhile must not wait for it. It owns what it needs.
    std::thread([run, target, options] {
      // The callbacks hold the run: the sampler thread may outlive a stop racing with an exit.
      auto sampler = sampler::Sampler::start(
          target, options, [run](model::Snapshot&& s) { run->on_snapshot(std::move(s)); },
          [run](sampler::StopReason reason, const std::string& message) {
            run->on_sampler_stop(reason, message);
          });
      {
        std::lock_guard lock(run->mutex);
        if (!run->abandoned) {
          run->attached = std::move(sampler);
          sampler = Error{"taken"};
        }
      }
      if (sampler) (*sampler)->stop();  // abandoned: nobody will take it
      else if (run->link.started)
        run->link.started(run->id);
    }).detach();
  }

  bool starting() const override { return starting_; }

  std::optional<Result<Json>> complete_start(std::uint64_t run) override {
    if (!starting_ || !run_ || run_->id != run) return std::nullopt;
    starting_ = false;
    std::optional<Result<std::unique_ptr<sampler::Sampler>>> attached;
    {
      std::lock_guard lock(run_->mutex);
      attached = std::exchange(run_->attached, std::nullopt);
    }
    if (!attached) return Result<Json>{Error{"profiling did not start", ErrorCode::Generic}};
    if (!*attached) {
      run_.reset();
      return Result<Json>{attached->error()};
    }
    Run& r = *run_;
    r.sampler = std::move(**attached);
    r.python_version = r.sampler->python_version();
    r.flusher = std::thread([run = run_] { run->flusher_loop(); });
    spdlog::info("profiling pid {} (Python {}) at {} Hz", target_, r.python_version,
                 r.arguments.rate);
    active_ = true;
    collectable_ = false;
    auto response = protocol::StartProfilingResponse::from(r.arguments, target_, r.python_version);
    response.warning = r.sampler->warning();
    if (!response.warning.empty()) spdlog::warn("pid {}: {}", target_, response.warning);
    return Result<Json>{protocol::to_json(response)};
  }

  bool active() const override { return active_; }
  bool stoppable() const override { return active_ || collectable_; }

  Result<Json> stop(const protocol::StopProfilingArguments& arguments) override {
    if (!run_ || !stoppable()) return Error{"profiling is not running", ErrorCode::Generic};
    if (active_) {
      finish();
      collectable_ = true;  // until its file is written, if one is asked for
    }
    auto summary = summarize(arguments.hide_debugger);
    if (arguments.output_path) {
      std::lock_guard lock(run_->mutex);
      run_->recording.duration_us = static_cast<std::int64_t>(summary.duration_ms * 1000);
      // A failed write keeps the run collectable: the client may try another path.
      if (auto written = write_profile_file(run_->recording, arguments.format,
                                            {.hide_debugger = arguments.hide_debugger},
                                            *arguments.output_path);
          !written)
        return written.error();
      summary.output_path = arguments.output_path;
    }
    collectable_ = false;
    return protocol::to_json(summary);
  }

  std::optional<Json> take_data() override {
    if (!run_) return std::nullopt;
    run_->data_signalled = false;
    std::optional<protocol::ProfilingBatch> batch;
    {
      std::lock_guard lock(run_->mutex);
      batch = run_->backlog.take();
    }
    if (!batch) return std::nullopt;
    return protocol::to_json(*batch);
  }

  std::optional<Json> end_run(std::uint64_t run, StoppedReason reason) override {
    if (starting_ && run == 0) halt();
    if (!run_ || !active_ || (run != 0 && run != run_->id)) return std::nullopt;
    finish();
    protocol::ProfilingStopped stopped;
    {
      std::lock_guard lock(run_->mutex);
      const bool by_sampler = run_->stop_reason != sampler::StopReason::Requested;
      if (by_sampler)
        reason = run_->stop_reason == sampler::StopReason::Exited ? StoppedReason::Exited
                                                                  : StoppedReason::Error;
      stopped.reason = reason;
      stopped.message = by_sampler ? run_->stop_message : std::string{};
    }
    stopped.summary = summarize(false);
    collectable_ = true;  // a stopProfiling may still write its file
    spdlog::info("profiling ended ({}): {} samples", protocol::to_string(stopped.reason),
                 stopped.summary.sample_count);
    return protocol::to_json(stopped);
  }

  Result<Json> export_profile(const protocol::ExportProfileArguments& arguments) override {
    // Kept from its start until the next one; a run that failed to start was dropped.
    if (!run_ || starting_) return Error{"no profile", ErrorCode::Generic};
    formats::Profile copy;
    {
      // Copied so that a run still sampling waits only for the copy, not for the writer.
      std::lock_guard lock(run_->mutex);
      copy = run_->recording;
    }
    if (copy.duration_us == 0) copy.duration_us = copy.end_us();
    protocol::ExportProfileResponse response;
    response.format = arguments.format;
    response.sample_count = static_cast<std::uint64_t>(copy.samples().size());
    response.content = formats::to_string(arguments.format, copy,
                                          {.hide_debugger = arguments.hide_debugger});
    return protocol::to_json(response);
  }

  bool exportable() const override { return run_ && !starting_; }

  void on_session_end() override { halt(); }

 private:
  // Stops sampling and the flusher (joining both), then queues the last batch.
  void finish() {
    active_ = false;
    Run& run = *run_;
    if (run.sampler) run.sampler->stop();
    {
      std::lock_guard lock(run.mutex);
      run.flusher_stop = true;
      if (run.ended_at == Clock::time_point{}) run.ended_at = Clock::now();
    }
    run.wake.notify_all();
    if (run.flusher.joinable()) run.flusher.join();
    std::lock_guard lock(run.mutex);
    run.flush_locked(run.ended_at, run.sampler ? run.sampler->stats().errors : 0);
  }

  void halt() {
    if (run_ && starting_) {
      std::optional<Result<std::unique_ptr<sampler::Sampler>>> attached;
      {
        std::lock_guard lock(run_->mutex);
        run_->abandoned = true;
        attached = std::exchange(run_->attached, std::nullopt);
      }
      // Outside the lock: stopping joins the sampling thread, which takes it.
      if (attached && *attached) (**attached)->stop();
    }
    starting_ = false;
    if (run_ && active_) finish();
    active_ = false;
    collectable_ = false;
    if (run_) run_->sampler.reset();
  }

  protocol::ProfilingSummary summarize(bool hide_debugger) {
    std::lock_guard lock(run_->mutex);
    protocol::ProfilingSummary s;
    s.dropped_sample_count = run_->backlog.dropped_total();
    s.sample_count = run_->samples - s.dropped_sample_count;  // delivered
    s.duration_ms = ms_between(run_->started, run_->ended_at);
    s.error_count = run_->errors_reported;
    s.top_functions = top_functions(run_->recording, hide_debugger);
    return s;
  }

  std::size_t max_pending_samples_;
  std::uint64_t next_run_id_ = 1;
  std::shared_ptr<Run> run_;
  pid_t target_ = 0;
  bool starting_ = false;
  bool active_ = false;
  bool collectable_ = false;
};

}  // namespace

std::unique_ptr<Profiler> make_live_profiler(std::size_t max_pending_samples) {
  return std::make_unique<LiveProfiler>(max_pending_samples);
}

}  // namespace dapprof::adapter
