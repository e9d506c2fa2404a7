// The profilingData stream read back: DAP events, one a line, as `dapprof convert --format
// stream` writes them and as a client keeps a live run's events (the VS Code extension saves a
// finished run so, to export it in any format once its session has ended). Each profilingData
// body is decoded against the frames, stacks and threads announced before it by the protocol's
// own reference decoder (protocol::StreamDecoder); its samples are spread evenly between its
// startTime and endTime, a run of one stack ID (`stacks`) being one sample of its count's weight.
// Other events (profilingStopped, output...) are skipped.
#include <fmt/format.h>

#include <cmath>

#include "formats/readers/readers.hpp"
#include "protocol/stream_decoder.hpp"

namespace dapprof::formats::readers {
namespace {

std::string_view first_line(std::string_view content) {
  const auto start = content.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return {};
  content.remove_prefix(start);
  return content.substr(0, content.find('\n'));
}

bool is_event(const Json& message) {
  const auto type = message.find("type");
  return message.is_object() && type != message.end() && type->is_string() && *type == "event" &&
         message.contains("event") && message.at("event").is_string();
}

std::int64_t us(double ms) { return std::llround(ms * 1000); }

}  // namespace

bool looks_like_stream(std::string_view content) {
  const auto doc = Json::parse(first_line(content), nullptr, false);
  return !doc.is_discarded() && is_event(doc);
}

Result<Profile> read_stream(std::string_view content) {
  Profile profile;
  protocol::StreamDecoder decoder;
  std::optional<std::uint32_t> unnamed_thread;
  std::optional<double> origin_ms;
  double end_ms = 0;
  std::vector<model::Frame> innermost_first;
  std::size_t line_number = 0;
  while (!content.empty()) {
    const auto newline = content.find('\n');
    const auto line = content.substr(0, newline);
    content.remove_prefix(newline == std::string_view::npos ? content.size() : newline + 1);
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const auto message = Json::parse(line, nullptr, false);
    if (message.is_discarded() || !is_event(message))
      return malformed(fmt::format("line {} is not a DAP event in JSON", line_number));
    if (message.at("event") != "profilingData") continue;
    const auto body = message.find("body");
    if (body == message.end() || !body->is_object())
      return malformed(fmt::format("line {}: a profilingData event without a body", line_number));
    auto samples = decoder.decode(*body);
    if (!samples) return malformed(fmt::format("line {}: {}", line_number, samples.message()));
    // Command lines, for the process level of a stream of several processes.
    if (const auto processes = body->find("processes");
        processes != body->end() && processes->is_object()) {
      for (const auto& [key, process] : processes->items()) {
        const auto pid = process.find("pid");
        const auto command = process.find("commandLine");
        if (pid == process.end() || !pid->is_number_integer() || command == process.end() ||
            !command->is_string())
          continue;
        profile.add_process(
            {.pid = pid->get<pid_t>(), .command_line = command->get<std::string>()});
      }
    }

    std::uint64_t count = 0;
    for (const auto& s : *samples) count += s.count;
    const auto start = body->find("startTime"), stop = body->find("endTime");
    const double start_ms = start != body->end() && start->is_number() ? start->get<double>() : 0;
    const double stop_ms =
        stop != body->end() && stop->is_number() ? stop->get<double>() : start_ms;
    if (!origin_ms && start != body->end() && count > 0) {
      origin_ms = start_ms;
      profile.start_unix_ns = std::llround(start_ms * 1e6);
    }
    const double base_ms = origin_ms ? start_ms - *origin_ms : 0;
    end_ms = std::max(end_ms, origin_ms ? stop_ms - *origin_ms : 0);
    const double step_ms = count > 1 ? (stop_ms - start_ms) / static_cast<double>(count - 1) : 0;
    std::uint64_t taken = 0;
    for (const auto& s : *samples) {
      std::uint32_t thread;
      if (s.thread) {
        thread = profile.add_thread(*s.thread);
      } else {
        // A stream without threadIds: one thread, as the collapsed reader makes one up.
        if (!unnamed_thread)
          unnamed_thread =
              profile.add_thread(model::ThreadInfo{.os_thread_id = 1, .name = "MainThread"});
        thread = *unnamed_thread;
      }
      innermost_first.assign(s.stack.rbegin(), s.stack.rend());
      const auto stack = profile.add_stack(innermost_first, profile.threads()[thread]);
      profile.add_sample(thread, stack, us(base_ms + step_ms * static_cast<double>(taken)),
                         static_cast<double>(s.count));
      taken += s.count;
    }
  }
  if (decoder.event_count() == 0) return malformed("it holds DAP events but no profilingData");
  profile.duration_us = us(end_ms);
  // The stream does not say the rate: a thread's samples are duration / (samples / threads) apart.
  if (decoder.sample_count() > 0 && decoder.duration_ms() > 0 && !profile.threads().empty())
    profile.interval_us = std::max<std::int64_t>(
        1, us(decoder.duration_ms() * static_cast<double>(profile.threads().size()) /
              static_cast<double>(decoder.sample_count())));
  return profile;
}

}  // namespace dapprof::formats::readers
