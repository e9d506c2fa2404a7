// The Gecko profile format, which the Firefox Profiler (profiler.firefox.com) imports: one thread
// object per sampled thread with its own string, frame and stack tables, each a schema (column
// name → index) and rows of data (docs-developer/gecko-profile-format.md in
// firefox-devtools/profiler).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "formats/instructions.hpp"
#include "formats/json_out.hpp"
#include "formats/writers.hpp"

namespace dapprof::formats {
namespace {

// Version 27 is the first without the frame table's "optimizations" column, which is the layout
// written here; the importer upgrades any older version it knows to its current one, and none
// after 27 changed samples, frames or stacks.
constexpr int kGeckoVersion = 27;

// Indices into meta.categories, which colour the timeline and the call tree.
enum Category : int { kOther = 0, kPython = 1, kNative = 2, kDebugger = 3, kTask = 4, kGc = 5 };

Json categories() {
  const auto category = [](std::string_view name, std::string_view color) {
    return Json{{"name", name}, {"color", color}, {"subcategories", Json::array({"Other"})}};
  };
  return Json::array({category("Other", "grey"), category("Python", "yellow"),
                      category("Native", "blue"), category("Debugger", "purple"),
                      category("asyncio task", "green"), category("GC", "orange")});
}

double ms(std::int64_t us) { return static_cast<double>(us) / 1000.0; }

// The importer takes a location of the form "name (file:line)" as a script's function with that
// file and line (and anything else as a label). The line there is the function's: its start where
// known, so that a function's samples at different lines stay one function; the frame table's
// line column is the line of the sample.
std::string location(const model::Frame& f) {
  const std::string file = model::frame_place(f);
  if (file.empty()) return f.function;
  const int line = f.first_line > 0 ? f.first_line : f.line;
  if (line <= 0) return fmt::format("{} ({})", f.function, file);
  return fmt::format("{} ({}:{})", f.function, file, line);
}

int category(const model::Frame& f) {
  if (f.debugger()) return kDebugger;
  if (f.task()) return kTask;
  if (f.gc()) return kGc;
  return f.native() ? kNative : kPython;
}

// One thread's tables, filled as its samples are visited; frames and stacks are interned per
// thread, as each Gecko thread has its own.
class ThreadTables {
 public:
  explicit ThreadTables(const Profile& profile) : profile_(profile) {}

  // The Gecko stack of a profile stack, null for an empty one.
  Json stack(std::uint32_t profile_stack) {
    const auto known = stacks_.find(profile_stack);
    if (known != stacks_.end()) return known->second;
    const auto& frames = profile_.stacks()[profile_stack];
    Json prefix = nullptr;
    // Root first: each stack's prefix is the stack of its caller.
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
      const auto key = std::pair(prefix.is_null() ? -1 : prefix.get<std::int64_t>(),
                                 static_cast<std::int64_t>(frame(*it)));
      const auto [found, added] =
          stack_ids_.try_emplace(key, static_cast<std::int64_t>(stack_rows_.size()));
      if (added) stack_rows_.push_back(Json::array({prefix, key.second}));
      prefix = found->second;
    }
    stacks_.emplace(profile_stack, prefix);
    return prefix;
  }

  Json frame_table() {
    return {{"schema",
             {{"location", 0},
              {"relevantForJS", 1},
              {"innerWindowID", 2},
              {"implementation", 3},
              {"line", 4},
              {"column", 5},
              {"category", 6},
              {"subcategory", 7}}},
            {"data", std::move(frame_rows_)}};
  }
  Json stack_table() {
    return {{"schema", {{"prefix", 0}, {"frame", 1}}}, {"data", std::move(stack_rows_)}};
  }
  Json string_table() { return std::move(strings_); }

  std::size_t string(const std::string& s) {
    const auto [it, added] = string_ids_.try_emplace(s, strings_.size());
    if (added) strings_.push_back(s);
    return it->second;
  }

 private:
  std::size_t frame(std::uint32_t profile_frame) {
    const auto [it, added] = frame_ids_.try_emplace(profile_frame, frame_rows_.size());
    if (added) {
      const auto& f = profile_.frames()[profile_frame];
      // With --opcodes: the instruction as the frame's implementation (a string, which the
      // profiler shows beside the function as it shows a JIT tier) and its column, 1-based as
      // the profiler counts them.
      const auto& i = f.instruction;
      frame_rows_.push_back(Json::array(
          {string(location(f)), false, nullptr,
           i ? Json(string(instruction_label(*i))) : Json(nullptr),
           f.line > 0 ? Json(f.line) : Json(nullptr),
           i && i->has_columns() ? Json(i->column + 1) : Json(nullptr), category(f), 0}));
    }
    return it->second;
  }
  const Profile& profile_;
  Json strings_ = Json::array();
  std::unordered_map<std::string, std::size_t> string_ids_;
  Json frame_rows_ = Json::array();
  std::unordered_map<std::uint32_t, std::size_t> frame_ids_;
  Json stack_rows_ = Json::array();
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> stack_ids_;  // (prefix, frame)
  std::unordered_map<std::uint32_t, Json> stacks_;
};

struct TimedSample {
  std::int64_t time_us;
  std::uint32_t stack;
  ThreadState state;
};

// Interval markers of what the thread was doing where the sampler saw it: "Idle" over each run
// of samples in which it waited, "GIL" over each run in which it held the GIL. A run ends at a
// sample in another state, or where no sample came for two intervals (the thread was not
// sampled: the default mode skips idle threads), and lasts until one interval past its last.
Json state_markers(const std::vector<TimedSample>& samples, std::int64_t interval_us,
                   ThreadTables& tables) {
  Json markers = Json::array();
  struct Kind {
    const char* name;
    int category;
    bool (*in)(const ThreadState&);
  };
  static constexpr Kind kKinds[] = {
      {"Idle", kOther, [](const ThreadState& s) { return s.known && !s.active; }},
      {"GIL", kPython, [](const ThreadState& s) { return s.known && s.gil; }},
  };
  for (const auto& kind : kKinds) {
    std::optional<std::int64_t> begin;
    std::int64_t last = 0;
    const auto close = [&] {
      if (!begin) return;
      markers.push_back(Json::array({tables.string(kind.name), ms(*begin), ms(last + interval_us),
                                     1 /* an interval */, kind.category, nullptr}));
      begin.reset();
    };
    for (const auto& s : samples) {
      if (begin && s.time_us - last > 2 * interval_us) close();
      if (!kind.in(s.state)) {
        close();
        continue;
      }
      if (!begin) begin = s.time_us;
      last = s.time_us;
    }
    close();
  }
  return markers;
}

std::string thread_name(const model::ThreadInfo& t) {
  return t.name.empty() ? fmt::format("Thread {}", t.os_thread_id) : t.name;
}

}  // namespace

void write_gecko(const Profile& profile, std::ostream& out, const WriteOptions&) {
  // Each thread's samples in time order: the importer expects a thread's times not to go back.
  std::vector<std::vector<TimedSample>> per_thread(profile.threads().size());
  for (const auto& s : profile.samples())
    per_thread[s.thread].push_back({s.time_us, s.stack, s.state});

  Json threads = Json::array();
  for (std::size_t i = 0; i < per_thread.size(); ++i) {
    auto& samples = per_thread[i];
    std::stable_sort(samples.begin(), samples.end(),
                     [](const auto& a, const auto& b) { return a.time_us < b.time_us; });
    ThreadTables tables(profile);
    Json rows = Json::array();
    // A sample's weight is not written: Gecko samples have none, and a sampled recording's are
    // all 1 (weights come from merged views only).
    for (const auto& sample : samples)
      rows.push_back(Json::array({tables.stack(sample.stack), ms(sample.time_us), 0}));
    Json markers = state_markers(samples, profile.interval_us, tables);
    const auto& t = profile.threads()[i];
    // The Firefox Profiler groups threads into tracks by pid, named by processName.
    auto process_name = profile.name;
    if (profile.process_level()) {
      if (auto process = profile.process(t.pid); !process.command_line.empty())
        process_name = std::move(process.command_line);
    }
    threads.push_back(
        {{"name", thread_name(t)},
         {"processName", std::move(process_name)},
         {"processType", "default"},
         {"registerTime", 0},
         {"unregisterTime", nullptr},
         {"tid", t.os_thread_id},
         {"pid", t.pid},
         // Markers without a payload: the Marker Chart and Table show them by name and time.
         {"markers",
          {{"schema",
            {{"name", 0},
             {"startTime", 1},
             {"endTime", 2},
             {"phase", 3},
             {"category", 4},
             {"data", 5}}},
           {"data", std::move(markers)}}},
         {"samples",
          {{"schema", {{"stack", 0}, {"time", 1}, {"eventDelay", 2}}}, {"data", std::move(rows)}}},
         {"frameTable", tables.frame_table()},
         {"stackTable", tables.stack_table()},
         {"stringTable", tables.string_table()}});
  }

  const Json meta = {{"version", kGeckoVersion},
                     {"interval", ms(profile.interval_us)},
                     {"startTime", static_cast<double>(profile.start_unix_ns) / 1e6},
                     {"shutdownTime", nullptr},
                     {"profilingStartTime", 0},
                     {"profilingEndTime", ms(profile.end_us())},
                     {"processType", 0},
                     {"product", "dapprof"},
                     {"stackwalk", 0},
                     {"debug", 0},
                     {"gcpoison", 0},
                     {"asyncstack", 0},
                     {"presymbolicated", true},
                     {"categories", categories()},
                     {"markerSchema", Json::array()}};
  const Json doc = {{"meta", meta},
                    {"libs", Json::array()},
                    {"pausedRanges", Json::array()},
                    {"processes", Json::array()},
                    {"threads", std::move(threads)}};
  dump_json(doc, out);
  out << '\n';
}

}  // namespace dapprof::formats
