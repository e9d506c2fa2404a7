// The Firefox Profiler's Gecko profile: the tables the importer reads, and each thread's samples
// resolving through its stack and frame tables back to the stacks recorded.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "formats/writers.hpp"
#include "sample_profile.hpp"

namespace dapprof::formats {
namespace {

using nlohmann::json;

// A schema's column of `name`.
std::size_t column(const json& table, const char* name) {
  return table.at("schema").at(name).get<std::size_t>();
}

TEST(Gecko, MetaAndThreads) {
  const auto profile = test::make_profile(test::sample_inputs());
  const auto doc = json::parse(to_string(model::ProfileFormat::Gecko, profile));
  const auto& meta = doc.at("meta");
  EXPECT_EQ(meta.at("version"), 27);
  EXPECT_EQ(meta.at("interval"), 10.0);  // ms
  EXPECT_EQ(meta.at("product"), "dapprof");
  EXPECT_TRUE(meta.at("markerSchema").is_array());
  std::vector<std::string> categories;
  for (const auto& c : meta.at("categories")) {
    categories.push_back(c.at("name"));
    EXPECT_FALSE(c.at("color").get<std::string>().empty());
    EXPECT_FALSE(c.at("subcategories").empty());
  }
  EXPECT_EQ(categories, (std::vector<std::string>{"Other", "Python", "Native", "Debugger",
                                                  "asyncio task", "GC"}));
  EXPECT_TRUE(doc.at("libs").empty() && doc.at("processes").empty());
  ASSERT_EQ(doc.at("threads").size(), profile.threads().size());
  for (std::size_t i = 0; i < profile.threads().size(); ++i) {
    const auto& t = doc["threads"][i];
    EXPECT_EQ(t.at("tid"), profile.threads()[i].os_thread_id);
    EXPECT_EQ(t.at("pid"), profile.threads()[i].pid);
    EXPECT_EQ(t.at("processType"), "default");
    EXPECT_TRUE(t.at("markers").at("data").empty());  // no sample says its thread's state
  }
  EXPECT_EQ(doc["threads"][0]["name"], "MainThread");
  EXPECT_EQ(doc["threads"][2]["name"], "Thread 2001");  // no name: its TID
}

TEST(Gecko, SamplesResolveToTheRecordedStacks) {
  const auto inputs = test::sample_inputs();
  const auto profile = test::make_profile(inputs);
  const auto doc = json::parse(to_string(model::ProfileFormat::Gecko, profile));

  // tid -> (time ms, root-first "location@line") of each input sample.
  std::map<std::uint64_t, std::vector<std::pair<double, std::vector<std::string>>>> want, got;
  for (const auto& in : inputs) {
    std::vector<std::string> frames;
    for (const auto& f : in.root_first)
      frames.push_back(frame_label(f) + "@" + std::to_string(f.line));
    want[in.os_thread_id].emplace_back(static_cast<double>(in.time_us) / 1000, frames);
  }
  for (const auto& t : doc["threads"]) {
    const auto& strings = t.at("stringTable");
    const auto& frames = t.at("frameTable");
    const auto& stacks = t.at("stackTable");
    const auto& samples = t.at("samples");
    double previous = -1;
    for (const auto& row : samples.at("data")) {
      const double time = row.at(column(samples, "time"));
      EXPECT_GE(time, previous);
      previous = time;
      std::vector<std::string> chain;
      json stack = row.at(column(samples, "stack"));
      while (!stack.is_null()) {
        const auto& s = stacks.at("data").at(stack.get<std::size_t>());
        const auto& prefix = s.at(column(stacks, "prefix"));
        // A prefix is an earlier row, so the table needs no second pass.
        if (!prefix.is_null()) {
          EXPECT_LT(prefix.get<std::size_t>(), stack.get<std::size_t>());
        }
        const auto& f = frames.at("data").at(s.at(column(stacks, "frame")).get<std::size_t>());
        const auto& line = f.at(column(frames, "line"));
        EXPECT_EQ(f.at(column(frames, "category")), 1);  // Python
        chain.insert(
            chain.begin(),
            strings.at(f.at(column(frames, "location")).get<std::size_t>()).get<std::string>() +
                "@" + std::to_string(line.is_null() ? 0 : line.get<int>()));
        stack = prefix;
      }
      got[t.at("tid")].emplace_back(time, chain);
    }
  }
  EXPECT_EQ(got, want);
}

TEST(Gecko, LocationNamesTheFunctionByItsStart) {
  Profile profile;
  model::Frame f{"f", "app.py", 12, model::FrameKind::Python, ""};
  f.first_line = 10;
  const std::vector<model::Frame> stack = {f};
  profile.add_sample(profile.add_thread({1, 2, 3, "T"}), profile.add_stack(stack), 0);
  const auto doc = json::parse(to_string(model::ProfileFormat::Gecko, profile));
  const auto& t = doc["threads"][0];
  const auto& row = t["frameTable"]["data"][0];
  EXPECT_EQ(t["stringTable"][row[column(t["frameTable"], "location")].get<std::size_t>()],
            "f (app.py:10)");
  EXPECT_EQ(row[column(t["frameTable"], "line")], 12);
}

// Markers from the states the sampler saw: a run of idle samples is one "Idle" interval, a run
// holding the GIL one "GIL" interval, each until an interval past its last sample; a change of
// state or a gap of over two intervals (the thread was not sampled) ends a run; samples whose
// state is not known make none.
TEST(Gecko, MarkersSpanRunsOfIdleAndGilSamples) {
  Profile profile;
  profile.interval_us = 1000;
  const std::vector<model::Frame> stack = {{"f", "app.py", 1, model::FrameKind::Python, ""}};
  const auto t = profile.add_thread({1, 2, 3, "T"});
  const auto s = profile.add_stack(stack);
  const ThreadState idle{.known = true}, gil{.known = true, .active = true, .gil = true},
      running{.known = true, .active = true};
  // ms: 0-2 idle, 3-4 running with the GIL, 5 running without, 6 with, gap, 20-21 with, 22-23
  // of unknown state.
  const std::pair<int, ThreadState> samples[] = {{0, idle}, {1, idle},    {2, idle}, {3, gil},
                                                 {4, gil},  {5, running}, {6, gil},  {20, gil},
                                                 {21, gil}, {22, {}},     {23, {}}};
  for (const auto& [ms, state] : samples) profile.add_sample(t, s, ms * 1000, 1, state);
  const auto doc = json::parse(to_string(model::ProfileFormat::Gecko, profile));
  const auto& thread = doc["threads"][0];
  const auto& markers = thread["markers"];
  std::vector<std::tuple<std::string, double, double, int, std::string>> got;
  for (const auto& m : markers["data"]) {
    got.emplace_back(
        thread["stringTable"][m[column(markers, "name")].get<std::size_t>()],
        m[column(markers, "startTime")], m[column(markers, "endTime")], m[column(markers, "phase")],
        doc["meta"]["categories"][m[column(markers, "category")].get<std::size_t>()]["name"]);
    EXPECT_TRUE(m[column(markers, "data")].is_null());
  }
  using M = std::tuple<std::string, double, double, int, std::string>;
  EXPECT_EQ(got, (std::vector<M>{{"Idle", 0.0, 3.0, 1, "Other"},
                                 {"GIL", 3.0, 5.0, 1, "Python"},
                                 {"GIL", 6.0, 7.0, 1, "Python"},
                                 {"GIL", 20.0, 22.0, 1, "Python"}}));
}

}  // namespace
}  // namespace dapprof::formats
