#pragma once
// A sampler the test drives: sampler::Sampler is the one thing of a profiling run that cannot run
// here on demand (a real one needs a Python process whose stacks, exits and failures a test
// cannot time), so the run's tests and the session's replace it with this. Its attach can be held
// open, made to fail, and its snapshots and exit come from the test's thread, as a real
// sampler's come from its own.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>

#include "adapter/profiling/run.hpp"

namespace dapprof::adapter::test {

class FakeSampling : public std::enable_shared_from_this<FakeSampling> {
 public:
  // What the next attach does: wait for release() (hold), then fail with `fail` or succeed.
  void hold_attach() {
    std::lock_guard lock(mutex_);
    hold_ = true;
  }
  void fail_attach(Error error) {
    std::lock_guard lock(mutex_);
    fail_ = std::move(error);
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      hold_ = false;
    }
    changed_.notify_all();
  }
  // Waits until an attach has begun (it may be held).
  bool wait_attaching(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return attaching_ > 0; });
  }

  // As the sampler's thread: one snapshot of `threads` threads, each stack `frames` deep.
  void snapshot(int threads = 1, int frames = 3) {
    model::Snapshot s;
    s.time = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) {
      model::ThreadStack stack;
      stack.info = {pid(), 100u + t, 1000u + t, t == 0 ? "MainThread" : "worker"};
      stack.active = true;
      for (int f = 0; f < frames; ++f)
        stack.frames.push_back({"f" + std::to_string(f), "/app/main.py", f + 1,
                                model::FrameKind::Python, ""});
      s.threads.push_back(std::move(stack));
    }
    on_snapshot()(std::move(s));
  }
  // As the sampler's thread when the process exits or sampling fails.
  void end(sampler::StopReason reason, const std::string& message) {
    sampler::Sampler::OnStop on_stop;
    {
      std::lock_guard lock(mutex_);
      if (ended_) return;
      ended_ = true;
      on_stop = on_stop_;
    }
    on_stop(reason, message);
  }

  int starts() const { return locked(starts_); }
  int stops() const { return locked(stops_); }
  pid_t pid() const { return locked(pid_); }
  model::SamplingSettings settings() const { return locked(settings_); }

  profiling::StartSampler starter() {
    return [self = shared_from_this()](pid_t pid, const sampler::SamplerOptions& options,
                                       sampler::Sampler::OnSnapshot on_snapshot,
                                       sampler::Sampler::OnStop on_stop)
               -> Result<std::unique_ptr<sampler::Sampler>> {
      std::unique_lock lock(self->mutex_);
      ++self->starts_;
      ++self->attaching_;
      self->changed_.notify_all();
      self->changed_.wait(lock, [&] { return !self->hold_; });
      if (self->fail_) return *std::exchange(self->fail_, std::nullopt);
      self->pid_ = pid;
      self->settings_ = options.sampling;
      self->on_snapshot_ = std::move(on_snapshot);
      self->on_stop_ = std::move(on_stop);
      self->ended_ = false;
      return std::unique_ptr<sampler::Sampler>(std::make_unique<Handle>(self));
    };
  }

 private:
  class Handle final : public sampler::Sampler {
   public:
    explicit Handle(std::shared_ptr<FakeSampling> owner) : owner_(std::move(owner)) {}
    ~Handle() override { stop(); }
    void stop() override {
      if (std::exchange(stopped_, true)) return;
      {
        std::lock_guard lock(owner_->mutex_);
        ++owner_->stops_;
      }
      owner_->end(sampler::StopReason::Requested, "");
    }
    sampler::SamplerStats stats() const override { return {}; }
    pid_t pid() const override { return owner_->pid(); }
    const std::string& python_version() const override { return version_; }
    const std::string& warning() const override { return warning_; }

   private:
    std::shared_ptr<FakeSampling> owner_;
    bool stopped_ = false;
    std::string version_ = "3.12.1", warning_;
  };

  template <typename T>
  T locked(const T& value) const {
    std::lock_guard lock(mutex_);
    return value;
  }
  sampler::Sampler::OnSnapshot on_snapshot() const { return locked(on_snapshot_); }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool hold_ = false;
  std::optional<Error> fail_;
  int starts_ = 0, stops_ = 0, attaching_ = 0;
  pid_t pid_ = 0;
  model::SamplingSettings settings_;
  sampler::Sampler::OnSnapshot on_snapshot_;
  sampler::Sampler::OnStop on_stop_;
  bool ended_ = false;
};

}  // namespace dapprof::adapter::test
