// speedscope's file format (https://www.speedscope.app/file-format-schema.json): shared frames,
// and profiles that are either "sampled" (stacks of frame indices with weights) or "evented"
// (open and close events of frames at times). Each profile is a thread.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "formats/readers/readers.hpp"

namespace dapprof::formats::readers {
namespace {

// Microseconds per unit; 0 for "none" (weights are sample counts). Bytes are not time and make
// no CPU profile.
std::optional<double> unit_us(const std::string& unit) {
  if (unit == "none") return 0;
  if (unit == "nanoseconds") return 1e-3;
  if (unit == "microseconds") return 1;
  if (unit == "milliseconds") return 1e3;
  if (unit == "seconds") return 1e6;
  return std::nullopt;
}

// dapprof's own profile names ("MainThread (thread 0x7f.., tid 12) pid 34") give the thread back.
model::ThreadInfo thread_of(const std::string& title) {
  static const std::regex dapprof_title(
      R"re((.*) \(thread 0x([0-9a-f]+), tid (\d+)\) pid (\d+))re");
  std::smatch m;
  model::ThreadInfo info;
  if (std::regex_match(title, m, dapprof_title)) {
    info.name = m[1] == "thread" ? "" : m[1].str();
    info.thread_id = std::stoull(m[2].str(), nullptr, 16);
    info.os_thread_id = std::stoull(m[3].str());
    info.pid = static_cast<pid_t>(std::stol(m[4].str()));
  } else {
    info.name = title;
  }
  return info;
}

// One sample of a profile before units are known: its stack, when it starts and how much of the
// unit it weighs.
struct Weighed {
  std::vector<std::uint32_t> root_first;
  double at = 0;
  double weight = 0;
};

Result<std::vector<Weighed>> sampled(const Json& p, std::size_t frame_count) {
  const auto& samples = p.at("samples");
  const auto& weights = p.at("weights");
  if (!samples.is_array() || !weights.is_array() || samples.size() != weights.size())
    return malformed("a sampled profile needs arrays \"samples\" and \"weights\" of one length");
  std::vector<Weighed> out;
  double at = p.value("startValue", 0.0);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    Weighed w{samples[i].get<std::vector<std::uint32_t>>(), at, weights[i].get<double>()};
    for (const auto f : w.root_first)
      if (f >= frame_count)
        return malformed(fmt::format("sample {} names frame {}, of {}", i, f, frame_count));
    at += w.weight;
    out.push_back(std::move(w));
  }
  return out;
}

Result<std::vector<Weighed>> evented(const Json& p, std::size_t frame_count) {
  std::vector<Weighed> out;
  std::vector<std::uint32_t> open;
  double last = p.value("startValue", 0.0);
  for (const auto& e : p.at("events")) {
    const auto type = e.at("type").get<std::string>();
    const auto at = e.at("at").get<double>();
    const auto frame = e.at("frame").get<std::uint32_t>();
    if (frame >= frame_count)
      return malformed(fmt::format("an event names frame {}, of {}", frame, frame_count));
    if (at < last)
      return malformed(fmt::format("events go back in time (at {} after {})", at, last));
    if (at > last && !open.empty()) out.push_back({open, last, at - last});
    last = at;
    if (type == "O") {
      open.push_back(frame);
    } else if (type == "C") {
      if (open.empty() || open.back() != frame)
        return malformed(
            fmt::format("event \"C\" of frame {} at {} closes a frame not open last", frame, at));
      open.pop_back();
    } else {
      return malformed(fmt::format("unknown event type \"{}\" (\"O\" or \"C\")", type));
    }
  }
  return out;
}

}  // namespace

bool looks_like_speedscope(const Json& doc) {
  if (!doc.is_object()) return false;
  const auto schema = doc.find("$schema");
  if (schema != doc.end() && schema->is_string() &&
      schema->get<std::string>().find("speedscope") != std::string::npos)
    return true;
  return doc.contains("shared") && doc.contains("profiles");
}

Result<Profile> read_speedscope(const Json& doc) {
  Profile profile;
  if (doc.contains("name") && doc["name"].is_string()) profile.name = doc["name"];
  std::vector<model::Frame> frames;
  for (const auto& f : doc.at("shared").at("frames")) {
    model::Frame frame;
    frame.function = f.at("name").get<std::string>();
    frame.line = f.value("line", 0);
    model::set_place(frame, f.value("file", std::string()));
    frames.push_back(std::move(frame));
  }

  struct Thread {
    std::uint32_t index;
    double unit_us;
    std::vector<Weighed> samples;
  };
  ProfileFiller filler(profile);
  std::vector<Thread> threads;
  double smallest_us = 0;  // the shortest timed sample: one sample's interval
  for (const auto& p : doc.at("profiles")) {
    const auto type = p.at("type").get<std::string>();
    const auto unit = p.value("unit", std::string("none"));
    const auto us = unit_us(unit);
    if (!us) return malformed(fmt::format("profile unit \"{}\" is not time nor samples", unit));
    auto samples = type == "sampled"   ? sampled(p, frames.size())
                   : type == "evented" ? evented(p, frames.size())
                                       : Result<std::vector<Weighed>>(malformed(
                                             fmt::format("unknown profile type \"{}\"", type)));
    if (!samples) return samples.error();
    for (const auto& s : *samples)
      if (*us > 0 && s.weight > 0 && (smallest_us == 0 || s.weight * *us < smallest_us))
        smallest_us = s.weight * *us;
    threads.push_back(
        {filler.thread(thread_of(p.value("name", std::string()))), *us, std::move(*samples)});
  }
  if (smallest_us > 0) profile.interval_us = std::max<std::int64_t>(1, std::llround(smallest_us));

  std::vector<model::Frame> stack;
  for (const auto& t : threads) {
    const double base = t.samples.empty() ? 0 : t.samples.front().at;
    for (const auto& s : t.samples) {
      stack.clear();
      for (const auto f : s.root_first) stack.push_back(frames[f]);
      // In samples: the weight itself, or its time over the interval.
      const double weight = t.unit_us == 0 ? s.weight : s.weight * t.unit_us / profile.interval_us;
      const double at_us = (s.at - base) * (t.unit_us == 0 ? profile.interval_us : t.unit_us);
      if (weight > 0) filler.add(stack, std::llround(at_us), weight, t.index);
    }
  }
  return profile;
}

}  // namespace dapprof::formats::readers
