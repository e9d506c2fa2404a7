#include "app/cli/profile_stream.hpp"

#include <algorithm>
#include <cmath>

#include "adapter/profiling/output.hpp"
#include "protocol/envelope.hpp"
#include "protocol/messages.hpp"

namespace dapprof::app::cli {
namespace {

void write_event(std::ostream& out, std::string_view event, protocol::Json body) {
  out << protocol::make_event(event, std::move(body))
             .dump(-1, ' ', false, protocol::Json::error_handler_t::replace)
      << '\n';
}

}  // namespace

Status write_profile_stream(const formats::Profile& profile, std::ostream& out,
                            const StreamOptions& options) {
  protocol::BatchBuilder builder(options.encoding);
  std::uint64_t delivered = 0;
  // Each batch covers the profile's time from the previous one to the end of its last sample,
  // so that the durations add up to the profile's length.
  std::int64_t covered_us = 0, reached_us = 0;
  const auto flush = [&](std::int64_t until_us) {
    const auto batch = builder.take(static_cast<double>(until_us - covered_us) / 1000.0);
    covered_us = until_us;
    write_event(out, protocol::kProfilingData, protocol::to_json(batch));
  };
  // What is known of the processes goes with the first batch, as a live run announces them.
  for (const auto& [pid, process] : profile.processes()) builder.add_process(process);
  for (const auto& sample : profile.samples()) {
    const auto& thread = profile.threads()[sample.thread];
    const auto& stack = profile.stacks()[sample.stack];
    const std::int64_t count = std::max<std::int64_t>(1, std::llround(sample.weight));
    for (std::int64_t i = 0; i < count; ++i) {
      if (auto added = builder.add(thread, stack, profile.frames(), sample.stack); !added)
        return added.error();
    }
    delivered += static_cast<std::uint64_t>(count);
    reached_us = std::max(reached_us, sample.time_us + count * profile.interval_us);
    if (builder.pending_samples() >= options.batch_samples) flush(reached_us);
  }
  const auto end_us = std::max(reached_us, profile.end_us());
  if (!builder.empty() || end_us > covered_us || delivered == 0)
    flush(std::max(end_us, covered_us));

  protocol::ProfilingStopped stopped;
  stopped.reason = protocol::StoppedReason::Exited;  // the recording is over, as a program is
  stopped.message = options.message;
  stopped.summary.sample_count = delivered;
  stopped.summary.duration_ms = static_cast<double>(std::max(end_us, covered_us)) / 1000.0;
  stopped.summary.top_functions = adapter::profiling::top_functions(profile, false);
  write_event(out, protocol::kProfilingStopped, protocol::to_json(stopped));
  out.flush();
  if (!out) return Error{"writing the stream failed", ErrorCode::OutputFailed};
  return Ok{};
}

}  // namespace dapprof::app::cli
