#include "formats/readers/readers.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "formats/readers/read_profile.hpp"
#include "formats/writers.hpp"
#include "sample_profile.hpp"

namespace dapprof::formats {
namespace {

using nlohmann::json;

std::string fixture_path(const std::string& name) {
  return std::string(DAPPROF_READER_FIXTURES) + "/" + name;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ReadProfile read_ok(const std::string& fixture) {
  auto read = read_profile_file(fixture_path(fixture));
  EXPECT_TRUE(read.ok()) << (read.ok() ? "" : read.message());
  return std::move(read).value();
}

std::string collapsed(const Profile& p, bool threads = false) {
  return to_string(model::ProfileFormat::Collapsed, p, {.threads = threads});
}

const model::ThreadInfo* thread_named(const Profile& p, const std::string& name) {
  for (const auto& t : p.threads())
    if (t.name == name) return &t;
  return nullptr;
}

// Samples per thread name, weighted.
std::map<std::string, double> weight_by_thread(const Profile& p) {
  std::map<std::string, double> out;
  for (const auto& s : p.samples()) out[p.threads()[s.thread].name] += s.weight;
  return out;
}

TEST(ReadSpeedscope, DapprofsRecordingKeepsThreadsAndWeights) {
  const auto read = read_ok("busy.speedscope.json");
  EXPECT_EQ(read.format, InputFormat::Speedscope);
  const auto doc = json::parse(file_text(fixture_path("busy.speedscope.json")));
  std::map<std::string, double> expected;  // the profiles' weights, by thread name
  for (const auto& p : doc["profiles"]) {
    double total = 0;
    for (const auto& w : p["weights"]) total += w.get<double>();
    const auto name = p["name"].get<std::string>();
    expected[name.substr(0, name.find(" (thread 0x"))] = total;
  }
  EXPECT_EQ(weight_by_thread(read.profile), expected);
  ASSERT_EQ(read.profile.threads().size(), 2u);
  const auto* worker = thread_named(read.profile, "sleepy-worker");
  ASSERT_NE(worker, nullptr);
  const auto title = doc["profiles"][1]["name"].get<std::string>();
  EXPECT_NE(title.find("tid " + std::to_string(worker->os_thread_id) + ")"), std::string::npos)
      << title;
  EXPECT_NE(worker->thread_id, 0u);
  // The main thread spun in leaf_spin, on busy.py's lines 16-17.
  const auto lines = collapsed(read.profile);
  EXPECT_NE(lines.find("mittel_schicht_ü (busy.py:22);leaf_spin (busy.py:1"), std::string::npos)
      << lines;
}

TEST(ReadCpuprofile, DapprofsRecordingGivesEverySampleItsStack) {
  const auto read = read_ok("busy.cpuprofile");
  EXPECT_EQ(read.format, InputFormat::Cpuprofile);
  const auto doc = json::parse(file_text(fixture_path("busy.cpuprofile")));
  EXPECT_EQ(read.profile.samples().size(), doc["samples"].size());
  // Each sample's innermost frame is its node's call frame (lines 0-based in the file).
  std::map<std::int64_t, json> call_frame;
  for (const auto& n : doc["nodes"]) call_frame[n["id"]] = n["callFrame"];
  std::size_t i = 0;
  std::int64_t time = 0;
  for (const auto& s : read.profile.samples()) {
    const auto& cf = call_frame[doc["samples"][i]];
    time += doc["timeDeltas"][i].get<std::int64_t>();
    ++i;
    EXPECT_EQ(s.time_us, time);
    const auto& stack = read.profile.stacks()[s.stack];
    // A thread sampled outside Python code (starting, or in C) has no frame below V8's root.
    if (stack.empty()) {
      EXPECT_EQ(cf["functionName"], "(root)");
      continue;
    }
    const auto& leaf = read.profile.frames()[stack.front()];
    EXPECT_EQ(leaf.function, cf["functionName"].get<std::string>());
    EXPECT_EQ(leaf.file, cf["url"].get<std::string>());
    EXPECT_EQ(leaf.line, cf["lineNumber"].get<int>() + 1);
  }
  const auto lines = collapsed(read.profile);
  EXPECT_NE(lines.find("leaf_spin (/srv/app/busy.py:1"), std::string::npos) << lines;
  EXPECT_NE(lines.find("sleeper (/srv/app/busy.py:27)"), std::string::npos) << lines;
  EXPECT_EQ(read.profile.duration_us,
            doc["endTime"].get<std::int64_t>() - doc["startTime"].get<std::int64_t>());
}

TEST(ReadCollapsed, DapprofsRawWithThreadsIsWrittenBackByteForByte) {
  const auto read = read_ok("busy-threads.txt");
  EXPECT_EQ(read.format, InputFormat::Collapsed);
  ASSERT_EQ(read.profile.threads().size(), 2u);
  const auto* main = thread_named(read.profile, "MainThread");
  ASSERT_NE(main, nullptr);
  EXPECT_NE(main->thread_id, 0u);
  EXPECT_NE(main->os_thread_id, 0u);  // made up: the stream names threads by it
  EXPECT_EQ(collapsed(read.profile, true), file_text(fixture_path("busy-threads.txt")));
}

TEST(ReadCollapsed, PySpysRawGivesProcessesThreadsAndFrames) {
  const auto read = read_ok("py-spy-raw.txt");
  ASSERT_EQ(read.profile.threads().size(), 3u);
  const auto& first = read.profile.threads()[0];
  EXPECT_EQ(first.pid, 4242);
  EXPECT_EQ(first.thread_id, 0x7F3A2C1B8740u);
  EXPECT_EQ(read.profile.threads()[2].pid, 4243);
  EXPECT_EQ(read.profile.total_weight(), 15);
  model::Frame lambda;
  for (const auto& f : read.profile.frames())
    if (f.line == 14) lambda = f;
  EXPECT_EQ(lambda.function, "<lambda> (x)");
  EXPECT_EQ(lambda.file, "lib/calc.py");
  EXPECT_EQ(read.profile.process(4243).command_line, "python3 worker.py");
  // dapprof's labels of the same threads and processes, in its own spelling (py-spy's for the
  // process, its command line kept).
  const auto out = collapsed(read.profile, true);
  EXPECT_NE(out.find("process 4242:\"python3 app.py --fast\";thread (0x7f3a2c1b8740);<module> "
                     "(app.py:30);main (app.py:25);compute (lib/calc.py:12) 7\n"),
            std::string::npos)
      << out;
}

TEST(ReadFrameLabel, EverySpellingOfFrameLabel) {
  const auto frame_at = [](std::string function, std::string file, int line) {
    model::Frame f;
    f.function = std::move(function);
    f.file = std::move(file);
    f.line = line;
    return f;
  };
  for (const auto& frame : {frame_at("f", "a/b.py", 12), frame_at("f", "a/b.py", 0),
                            frame_at("f", "", 0), frame_at("g (h)", "c:d.py", 3)}) {
    const auto back = readers::parse_frame_label(frame_label(frame));
    EXPECT_EQ(back.function, frame.function);
    EXPECT_EQ(back.file, frame.file);
    EXPECT_EQ(back.line, frame.line);
  }
}

TEST(ReadSpeedscope, EventedProfileBecomesWeightedSamples) {
  const std::string doc =
      R"({"shared":{"frames":[{"name":"a","file":"a.py","line":1},{"name":"b"}]},
    "profiles":[{"type":"evented","name":"worker","unit":"milliseconds","startValue":0,
    "endValue":4,"events":[{"type":"O","at":0,"frame":0},{"type":"O","at":1,"frame":1},
    {"type":"C","at":3,"frame":1},{"type":"C","at":4,"frame":0}]}]})";
  auto read = read_profile(doc, "evented.json");
  ASSERT_TRUE(read.ok()) << read.message();
  EXPECT_EQ(read->profile.interval_us, 1000);  // the shortest sample
  EXPECT_EQ(collapsed(read->profile), "a (a.py:1) 2\na (a.py:1);b 2\n");
  EXPECT_EQ(read->profile.threads().at(0).name, "worker");
}

// Written by dapprof, read back: the same stacks with the same counts, per thread where the
// format keeps threads.
TEST(ReadRoundTrip, EveryReadFormatGivesBackTheWrittenStacks) {
  const auto original = test::make_profile(test::sample_inputs());
  // cpuprofile counts a weighted sample once (its samples are hits), so it gets whole ones.
  auto unweighted = test::sample_inputs();
  for (auto& in : unweighted) in.weight = 1;
  const auto unweighted_original = test::make_profile(unweighted);
  for (const auto format : {model::ProfileFormat::Speedscope, model::ProfileFormat::Cpuprofile,
                            model::ProfileFormat::Collapsed}) {
    SCOPED_TRACE(model::file_extension(format));
    // cpuprofile has no threads but their pseudo-frames, which the reader takes back.
    const bool threads = format != model::ProfileFormat::Speedscope;
    const auto& source =
        format == model::ProfileFormat::Cpuprofile ? unweighted_original : original;
    const auto written = to_string(format, source, {.threads = threads});
    auto read = read_profile(written, "round-trip");
    ASSERT_TRUE(read.ok()) << read.message();
    EXPECT_EQ(collapsed(read->profile, true), collapsed(source, true));
    EXPECT_EQ(read->profile.total_weight(), source.total_weight());
  }
}

TEST(ReadErrors, MalformedAndUnknownFilesSayWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "the file is empty"},
      {"main;work 3\nno count here\n", "line 2 is not a collapsed stack"},
      {"# only a comment\n", "holds no stacks"},
      {"\x1f\x8b\x08\x00", "gzip-compressed"},
      {std::string("ab\0cd", 5), "binary file"},
      {R"({"nodes": [)", "not valid JSON"},
      {R"({"traceEvents": []})", "Chrome trace"},
      {R"({"meta": {}, "threads": []})", "Firefox Profiler"},
      {R"({"hello": 1})", "neither a speedscope profile"},
      {R"({"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","unit":"none",
          "samples":[[0,5]],"weights":[1]}]})",
       "sample 0 names frame 5, of 1"},
      {R"({"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","unit":"bytes",
          "samples":[],"weights":[]}]})",
       "unit \"bytes\""},
      {R"({"shared":{"frames":[{"name":"a"},{"name":"b"}]},"profiles":[{"type":"evented",
          "unit":"none","events":[{"type":"O","at":0,"frame":0},{"type":"C","at":1,"frame":1}]}]})",
       "closes a frame not open last"},
      {R"({"shared":{"frames":[]},"profiles":[{"type":"sampled","samples":"x","weights":[]}]})",
       "not a valid speedscope profile"},
      {R"j({"nodes":[{"id":1,"callFrame":{"functionName":"(root)"},"children":[7]}]})j",
       "node 7 is not in \"nodes\""},
      {R"({"nodes":[{"id":1,"callFrame":{"functionName":"f"}}],"samples":[1,1],"timeDeltas":[1]})",
       "differ in length"},
  };
  for (const auto& [content, message] : cases) {
    const auto read = read_profile(content, "input.prof");
    ASSERT_FALSE(read.ok()) << content;
    EXPECT_EQ(read.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(read.message().find("input.prof: "), std::string::npos) << read.message();
    EXPECT_NE(read.message().find(message), std::string::npos) << read.message();
  }
  const auto missing = read_profile_file(fixture_path("no-such-file.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("No such file"), std::string::npos) << missing.message();
}

}  // namespace
}  // namespace dapprof::formats
