// Chrome trace and .cpuprofile: the timeline formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "formats/writers.hpp"
#include "sample_profile.hpp"

namespace dapprof::formats {
namespace {

using nlohmann::json;
using test::InputSample;

TEST(ChromeTrace, EventsBalancedPerThreadAndFollowSamples) {
  const auto inputs = test::sample_inputs();
  const auto doc =
      json::parse(to_string(model::ProfileFormat::ChromeTrace, test::make_profile(inputs)));
  ASSERT_TRUE(doc["traceEvents"].is_array());

  std::map<std::pair<int, std::uint64_t>, std::string> thread_names;
  std::map<std::pair<int, std::uint64_t>, std::vector<json>> per_thread;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "thread_name") thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
      continue;
    }
    ASSERT_TRUE(ph == "B" || ph == "E") << e.dump();
    per_thread[{e["pid"], e["tid"]}].push_back(e);
  }
  EXPECT_EQ(thread_names.size(), 3u);
  EXPECT_EQ((thread_names[{100, 1002}]), "wörker \"1\" <&>");
  ASSERT_EQ(per_thread.size(), 3u);

  for (const auto& [key, events] : per_thread) {
    std::vector<std::string> open;
    std::int64_t last_ts = 0;
    // The stack open at each sample time, rebuilt from the events.
    std::map<std::int64_t, std::vector<std::string>> open_at;
    for (const auto& e : events) {
      const std::int64_t ts = e["ts"];
      ASSERT_GE(ts, last_ts) << "events out of order on tid " << key.second;
      last_ts = ts;
      if (e["ph"] == "B") {
        open.push_back(e["name"]);
      } else {
        ASSERT_FALSE(open.empty()) << "E without B on tid " << key.second;
        ASSERT_EQ(open.back(), e["name"]) << "E does not close the innermost slice";
        open.pop_back();
      }
      open_at[ts] = open;
    }
    EXPECT_TRUE(open.empty()) << "unclosed slices on tid " << key.second;
    for (const auto& in : inputs) {
      if (in.pid != key.first || in.os_thread_id != key.second) continue;
      std::vector<std::string> want;
      for (const auto& f : in.root_first) want.push_back(f.function);
      // The state after every event up to that time (an unchanged stack emits nothing).
      auto it = open_at.upper_bound(in.time_us);
      ASSERT_NE(it, open_at.begin());
      EXPECT_EQ(std::prev(it)->second, want) << "tid " << key.second << " at " << in.time_us;
    }
  }
  // Thread 1002 is missing from the samples between 10 ms and 50 ms: its slices close at 20 ms.
  const auto& b = per_thread[{100, 1002}];
  EXPECT_TRUE(std::any_of(b.begin(), b.end(), [](const json& e) {
    return e["ph"] == "E" && e["ts"] == 20000 && e["name"] == "main";
  }));
}

TEST(CpuProfile, NodesAndSamplesReconstructStacks) {
  const auto inputs = test::sample_inputs();
  const auto profile = test::make_profile(inputs);
  const auto doc = json::parse(to_string(model::ProfileFormat::Cpuprofile, profile));
  std::map<int, json> nodes;
  std::map<int, int> parent;
  std::int64_t hits = 0;
  for (const auto& n : doc["nodes"]) {
    nodes[n["id"]] = n;
    hits += n["hitCount"].get<std::int64_t>();
    for (const auto& c : n.value("children", json::array())) parent[c] = n["id"];
  }
  ASSERT_EQ(nodes.at(1)["callFrame"]["functionName"], "(root)");
  EXPECT_FALSE(parent.contains(1));
  ASSERT_EQ(doc["samples"].size(), inputs.size());
  ASSERT_EQ(doc["timeDeltas"].size(), inputs.size());
  EXPECT_EQ(hits, static_cast<std::int64_t>(inputs.size()));

  auto sorted = inputs;
  std::stable_sort(sorted.begin(), sorted.end(), [](const InputSample& a, const InputSample& b) {
    return a.time_us < b.time_us;
  });
  std::int64_t t = doc["startTime"];
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    t += doc["timeDeltas"][i].get<std::int64_t>();
    EXPECT_EQ(t, sorted[i].time_us);
    std::vector<model::Frame> stack;
    for (int id = doc["samples"][i]; id != 1; id = parent.at(id)) {
      const auto& cf = nodes.at(id)["callFrame"];
      const int line0 = cf["lineNumber"];
      stack.insert(stack.begin(),
                   model::Frame{cf["functionName"].get<std::string>(), cf["url"].get<std::string>(),
                                line0 < 0 ? 0 : line0 + 1, model::FrameKind::Python, ""});
      EXPECT_FALSE(cf["scriptId"].get<std::string>().empty());
    }
    // Two processes in the profile: a "process N" pseudo-frame above the real root.
    ASSERT_FALSE(stack.empty());
    EXPECT_EQ(stack.front().function, "process " + std::to_string(sorted[i].pid));
    stack.erase(stack.begin());
    EXPECT_EQ(stack, sorted[i].root_first) << "sample " << i;
  }
  EXPECT_EQ(t - doc["startTime"].get<std::int64_t>(), sorted.back().time_us);
  EXPECT_GE(doc["endTime"].get<std::int64_t>(), t);
}

}  // namespace
}  // namespace dapprof::formats
