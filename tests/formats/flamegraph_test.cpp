// The SVG is checked with a real XML parser (Python's xml.etree, run as a child process), not by
// string matching.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "formats/writers.hpp"
#include "sample_profile.hpp"

extern char** environ;

namespace dapprof::formats {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kParser = R"PY(
import json, sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
frames = []
for g in root.iter(S + "g"):
    if g.get("class") != "f":
        continue
    rects = g.findall(S + "rect")
    frames.append({"n": g.get("data-n"), "d": int(g.get("data-d")), "rects": len(rects),
                   "x": float(rects[0].get("x")), "w": float(rects[0].get("width")),
                   "title": g.find(S + "title").text, "text": g.find(S + "text").text or ""})
title = [t.text for t in root.iter(S + "text") if t.get("id") == "title"]
print(json.dumps({"root": root.tag, "frames": frames, "scripts": len(root.findall(S + "script")),
                  "title": title[0] if title else None}))
)PY";

// Writes the SVG and parses it with Python; returns what the parser saw.
json parse_svg(const std::string& svg) {
  const fs::path dir = fs::temp_directory_path() / ("dapprof-svg-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const auto svg_path = dir / "graph.svg", script = dir / "parse.py", out = dir / "out.json";
  std::ofstream(svg_path, std::ios::binary) << svg;
  std::ofstream(script) << kParser;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const std::string python = "/usr/bin/python3";
  std::vector<std::string> args = {python, script.string(), svg_path.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot run " + python);
  int status = 0;
  waitpid(pid, &status, 0);
  std::stringstream text;
  text << std::ifstream(out).rdbuf();
  fs::remove_all(dir);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("the SVG is not well-formed XML (xml.etree failed)");
  }
  return json::parse(text.str());
}

TEST(Flamegraph, WellFormedWithOneRectPerNodeAndProportionalWidths) {
  const auto inputs = test::sample_inputs();
  const std::string svg = to_string(model::ProfileFormat::Flamegraph, test::make_profile(inputs));
  const auto doc = parse_svg(svg);
  EXPECT_EQ(doc["root"], "{http://www.w3.org/2000/svg}svg");
  EXPECT_EQ(doc["scripts"], 1);
  EXPECT_EQ(doc["title"], "Flame Graph: fixture <&> \"ü\"");

  // The aggregated tree, computed here from the inputs: path (labels from the root) -> samples.
  std::map<std::vector<std::string>, double> want;
  double total = 0;
  for (const auto& in : inputs) {
    std::vector<std::string> path = {"all"};
    want[path] += in.weight;
    path.push_back("process " + std::to_string(in.pid));
    want[path] += in.weight;
    for (const auto& f : in.root_first) {
      path.push_back(frame_label(f));
      want[path] += in.weight;
    }
    total += in.weight;
  }

  const auto& frames = doc["frames"];
  ASSERT_EQ(frames.size(), want.size());
  // Frames are written depth-first, so a stack of the current path rebuilds each one's path.
  std::vector<std::string> path;
  std::vector<std::pair<double, double>> spans;  // x range per depth
  for (const auto& f : frames) {
    EXPECT_EQ(f["rects"], 1);
    const std::size_t depth = f["d"];
    ASSERT_LE(depth, path.size());
    path.resize(depth);
    spans.resize(depth);
    path.push_back(f["n"]);
    const double x = f["x"], w = f["w"];
    spans.emplace_back(x, x + w);
    ASSERT_TRUE(want.contains(path)) << f.dump();
    EXPECT_NEAR(w, want[path] / total * 1180, 1e-3) << f.dump();
    if (depth > 0) {  // inside the parent
      EXPECT_GE(x, spans[depth - 1].first - 1e-3);
      EXPECT_LE(x + w, spans[depth - 1].second + 1e-3);
    }
    const std::string title = f["title"];
    EXPECT_EQ(title.rfind(path.back() + "\n", 0), 0u) << title;
    const auto samples = std::llround(want[path]);
    EXPECT_NE(title.find(std::to_string(samples) + " samples"), std::string::npos) << title;
    want.erase(path);
  }
  EXPECT_TRUE(want.empty());
}

TEST(Flamegraph, BadBytesAndControlCharactersStayWellFormed) {
  Profile p;
  p.name = "bad \x01\xff name";
  const auto t = p.add_thread({1, 1, 1, "t\x02"});
  const std::vector<model::Frame> stack = {
      {"f\xc3\x28<]]>", "a\x1f.py", 3, model::FrameKind::Python, ""}};
  p.add_sample(t, p.add_stack(stack), 0);
  const auto doc = parse_svg(to_string(model::ProfileFormat::Flamegraph, p, {.threads = true}));
  ASSERT_EQ(doc["frames"].size(), 3u);  // all, thread, f
  EXPECT_EQ(doc["frames"][2]["n"], "f\xEF\xBF\xBD(<]]> (a\xEF\xBF\xBD.py:3)");
  // The JSON writers repair bad bytes too instead of failing.
  EXPECT_NO_THROW(json::parse(to_string(model::ProfileFormat::Speedscope, p)));
  EXPECT_NO_THROW(json::parse(to_string(model::ProfileFormat::ChromeTrace, p)));
  EXPECT_NO_THROW(json::parse(to_string(model::ProfileFormat::Cpuprofile, p)));
}

TEST(Flamegraph, EmptyProfile) {
  const auto doc = parse_svg(to_string(model::ProfileFormat::Flamegraph, Profile{}));
  EXPECT_TRUE(doc["frames"].empty());
}

}  // namespace
}  // namespace dapprof::formats
