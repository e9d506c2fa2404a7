#include "adapter/profiling/run.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "adapter/profiling/output.hpp"
#include "common/base64.hpp"
#include "formats/writers.hpp"
#include "protocol/sampling.hpp"
#include "sampler/process/age.hpp"

namespace dapprof::adapter::profiling {
namespace {

using protocol::StoppedReason;

// Profiling data waits while more than this is unread by the client in the kernel, and looks
// again after kRetry: a slow client then delays DAP traffic by at most this much data.
constexpr std::size_t kKernelBacklog = 256u * 1024u;
constexpr auto kRetry = std::chrono::milliseconds(10);
// A process younger than kYoung is given up to kInterpreterStartup to start its interpreter.
constexpr auto kYoung = std::chrono::seconds(5);
constexpr auto kInterpreterStartup = std::chrono::seconds(2);

StoppedReason stopped_reason(sampler::StopReason reason) {
  return reason == sampler::StopReason::Exited ? StoppedReason::Exited : StoppedReason::Error;
}

}  // namespace

std::string_view to_string(State state) {
  switch (state) {
    case State::Idle:
      return "idle";
    case State::Attaching:
      return "attaching";
    case State::Running:
      return "running";
    case State::Ended:
      return "ended";
  }
  return "idle";
}

std::shared_ptr<Run> Run::create(Executor strand, Sink& sink, Config config) {
  return std::make_shared<Run>(strand, sink, std::move(config));
}

Run::Run(Executor strand, Sink& sink, Config config)
    : strand_(strand),
      sink_(&sink),
      config_(std::move(config)),
      flush_timer_(strand),
      retry_timer_(strand) {
  if (!config_.start_sampler) config_.start_sampler = &sampler::Sampler::start;
}

Run::~Run() { close(); }

void Run::start(Json request, const protocol::StartProfilingArguments& arguments, pid_t target) {
  if (state_ == State::Attaching || state_ == State::Running) {
    sink_->respond_error(request, protocol::errors::already_profiling(target_));
    return;
  }
  // An ended run is dropped: its profile was exportable until now.
  const auto generation = ++generation_;
  state_ = State::Attaching;
  arguments_ = arguments;
  target_ = target;
  collected_ = false;
  sampler_.reset();
  recording_ = std::make_shared<Recording>(
      fmt::format("python (pid {})", target), arguments.rate, config_.max_pending_samples,
      arguments.stacks ? protocol::Encoding::Stacks : protocol::Encoding::Frames,
      arguments.subprocesses);
  pending_start_ = std::move(request);

  // The request handler refused arguments whose settings conflict.
  const auto settings = protocol::sampling_settings(arguments);
  sampler::SamplerOptions options{.sampling = settings ? *settings : model::SamplingSettings{}};
  // A program started a moment ago (a profile-only launch, a child process just announced) may
  // not have mapped its interpreter yet: the attach waits for it a while, as for a program
  // dapprof starts itself, rather than answering that it is not Python. An older process is
  // what it is.
  if (const auto age = sampler::process::process_age(target); age && *age < kYoung)
    options.wait_for_interpreter = kInterpreterStartup;
  // Detached: a session that ends meanwhile must not wait for an attach. What it posts holds the
  // run weakly; a sampler nobody takes is stopped by its destructor.
  std::thread([weak = weak_from_this(), mailbox = mailbox_, generation, recording = recording_,
               target, options, start_sampler = config_.start_sampler] {
    auto on_stop = [weak, mailbox, generation, recording](sampler::StopReason reason,
                                                          const std::string& message) {
      recording->sampler_stopped(reason, message);
      mailbox->post([weak, generation] {
        if (auto self = weak.lock()) self->on_sampler_ended(generation);
      });
    };
    auto sampler = start_sampler(
        target, options, [recording](model::Snapshot&& s) { recording->add(std::move(s)); },
        std::move(on_stop));
    mailbox->post([weak, generation, sampler = std::move(sampler)]() mutable {
      if (auto self = weak.lock()) self->on_attached(generation, std::move(sampler));
    });
  }).detach();
}

void Run::on_attached(std::uint64_t generation, Result<std::unique_ptr<sampler::Sampler>> sampler) {
  if (generation != generation_ || state_ != State::Attaching || !sink_) {
    if (sampler) (*sampler)->stop();  // abandoned while attaching
    return;
  }
  const Json request = *std::exchange(pending_start_, std::nullopt);
  if (!sampler) {
    state_ = State::Idle;
    recording_.reset();
    sink_->respond_error(request, protocol::from_error(sampler.error()));
    if (deferred_stop_) {
      sink_->respond_error(*std::exchange(deferred_stop_, std::nullopt),
                           protocol::errors::not_profiling());
    }
    return;
  }
  sampler_ = std::move(*sampler);
  state_ = State::Running;
  auto response =
      protocol::StartProfilingResponse::from(arguments_, target_, sampler_->python_version());
  response.warning = sampler_->warning();
  spdlog::info("profiling pid {} (Python {}) at {} Hz", target_, response.python_version,
               arguments_.rate);
  if (!response.warning.empty()) spdlog::warn("pid {}: {}", target_, response.warning);
  sink_->respond(request, protocol::to_json(response));
  arm_flush();
  if (deferred_stop_) {
    const Json stop_request = *std::exchange(deferred_stop_, std::nullopt);
    stop(stop_request, *std::exchange(deferred_stop_arguments_, std::nullopt));
  } else if (auto ending = recording_->ending();
             ending && ending->reason != sampler::StopReason::Requested) {
    on_sampler_ended(generation);  // it ended before this ran: its post was dropped
  }
}

void Run::on_sampler_ended(std::uint64_t generation) {
  if (generation != generation_ || state_ != State::Running || !sink_) return;
  const auto ending = recording_->ending();
  if (!ending || ending->reason == sampler::StopReason::Requested) return;
  finish_sampling();
  protocol::ProfilingStopped stopped{stopped_reason(ending->reason), ending->message,
                                     recording_->summary(false)};
  spdlog::info("profiling ended ({}): {} samples", protocol::to_string(stopped.reason),
               stopped.summary.sample_count);
  send_data(true);
  sink_->send_event(protocol::kProfilingStopped, protocol::to_json(stopped));
}

void Run::stop(Json request, const protocol::StopProfilingArguments& arguments) {
  switch (state_) {
    case State::Attaching:
      if (deferred_stop_) {  // one is enough: the run ends once
        sink_->respond_error(request, protocol::errors::not_profiling());
        return;
      }
      deferred_stop_ = std::move(request);
      deferred_stop_arguments_ = arguments;
      return;
    case State::Running:
      finish_sampling();
      send_data(true);  // the last batch goes before the response
      answer_stop(request, arguments);
      return;
    case State::Ended:
      if (!collected_) return answer_stop(request, arguments);
      [[fallthrough]];
    case State::Idle:
      sink_->respond_error(request, protocol::errors::not_profiling());
      return;
  }
}

void Run::answer_stop(const Json& request, const protocol::StopProfilingArguments& arguments) {
  auto summary = recording_->summary(arguments.hide_debugger);
  if (arguments.output_path) {
    // A failed write leaves the run collectable: the client may try another path.
    if (auto written =
            write_profile_file(recording_->snapshot_profile(), arguments.format,
                               {.hide_debugger = arguments.hide_debugger}, *arguments.output_path);
        !written) {
      sink_->respond_error(request, protocol::from_error(written.error()));
      return;
    }
    summary.output_path = arguments.output_path;
  }
  collected_ = true;
  sink_->respond(request, protocol::to_json(summary));
}

void Run::export_profile(const Json& request, const protocol::ExportProfileArguments& arguments) {
  if (state_ != State::Running && state_ != State::Ended) {
    sink_->respond_error(request, protocol::errors::no_profile());
    return;
  }
  // A copy, so that a run still sampling waits only for the copy, not for the writer.
  const formats::Profile profile = recording_->snapshot_profile();
  protocol::ExportProfileResponse response;
  response.format = arguments.format;
  response.file_extension = std::string(model::file_extension(arguments.format));
  response.sample_count = profile.samples().size();
  response.content =
      formats::to_string(arguments.format, profile, {.hide_debugger = arguments.hide_debugger});
  // A JSON string holds text only: a binary document (pprof's gzip) goes as base64, and says so.
  if (model::is_binary(arguments.format)) {
    response.content = base64(response.content);
    response.content_encoding = protocol::ContentEncoding::Base64;
  }
  sink_->respond(request, protocol::to_json(response));
}

void Run::end(StoppedReason reason) {
  if (state_ == State::Attaching) {
    ++generation_;  // the attach's result is dropped, its sampler stopped
    state_ = State::Idle;
    recording_.reset();
    const protocol::ProtocolError why{protocol::ProfilingErrorId::Internal,
                                      "Profiling did not start: the debug session is ending."};
    for (auto* pending : {&pending_start_, &deferred_stop_}) {
      if (*pending) sink_->respond_error(*std::exchange(*pending, std::nullopt), why);
    }
    return;
  }
  if (state_ != State::Running) return;
  finish_sampling();
  // The sampler may have ended first (its post not run yet): then it gives the reason.
  protocol::ProfilingStopped stopped{reason, {}, recording_->summary(false)};
  if (auto ending = recording_->ending();
      ending && ending->reason != sampler::StopReason::Requested) {
    stopped.reason = stopped_reason(ending->reason);
    stopped.message = ending->message;
  }
  spdlog::info("profiling ended ({}): {} samples", protocol::to_string(stopped.reason),
               stopped.summary.sample_count);
  send_data(true);
  sink_->send_event(protocol::kProfilingStopped, protocol::to_json(stopped));
}

void Run::close() {
  ++generation_;
  mailbox_->close();
  flush_timer_.cancel();
  retry_timer_.cancel();
  if (sampler_) sampler_->stop();
  sampler_.reset();
  pending_start_.reset();
  deferred_stop_.reset();
  if (state_ != State::Idle) state_ = State::Ended;
  sink_ = nullptr;
}

void Run::finish_sampling() {
  flush_timer_.cancel();
  if (sampler_) sampler_->stop();  // joins the sampling thread: no snapshot comes after this
  const auto errors_at_end = sampler_ ? sampler_->stats().errors : 0;
  sampler_.reset();
  const auto now = Clock::now();
  recording_->mark_ended(now);
  recording_->flush(now, errors_at_end);
  state_ = State::Ended;
  collected_ = false;
}

void Run::send_data(bool everything) {
  if (!sink_ || !recording_) return;
  while (sink_->client_open()) {
    if (!everything) {
      // Something else is waiting to be written: client_drained() calls again.
      if (sink_->client_queued_bytes() > 0) return;
      // The client is not keeping up; what we queue now would sit in the kernel ahead of the
      // DAP traffic that follows. The kernel drains without telling us: look again shortly.
      if (sink_->client_unsent_in_kernel() > kKernelBacklog) return arm_retry();
    }
    auto batch = recording_->take_batch();
    if (!batch) return;
    sink_->send_event(protocol::kProfilingData, protocol::to_json(*batch));
  }
}

void Run::arm_flush() {
  const auto interval = std::chrono::milliseconds(arguments_.batch_interval_ms);
  auto next = flush_timer_.expiry() + interval;
  const auto now = Clock::now();
  if (next < now) next = now + interval;  // first time, or fell behind (a suspended machine)
  flush_timer_.expires_at(next);
  flush_timer_.async_wait(
      [weak = weak_from_this(), generation = generation_](const asio::error_code& ec) {
        auto self = weak.lock();
        if (ec || !self || generation != self->generation_ || self->state_ != State::Running)
          return;
        if (self->recording_->flush(Clock::now(), self->sampler_->stats().errors))
          self->send_data(false);
        self->arm_flush();
      });
}

void Run::arm_retry() {
  if (retry_armed_) return;
  retry_armed_ = true;
  retry_timer_.expires_after(kRetry);
  retry_timer_.async_wait([weak = weak_from_this()](const asio::error_code& ec) {
    auto self = weak.lock();
    if (!self) return;
    self->retry_armed_ = false;
    if (!ec) self->send_data(false);
  });
}

}  // namespace dapprof::adapter::profiling
