#include <gtest/gtest.h>

#include "formats/call_tree.hpp"
#include "formats/profile.hpp"
#include "formats/summary.hpp"
#include "formats/text.hpp"
#include "sample_profile.hpp"

namespace dapprof::formats {
namespace {

TEST(ProfileModel, InternsFramesStacksAndThreads) {
  const auto p = test::make_profile(test::sample_inputs());
  EXPECT_EQ(p.frames().size(), 4u);
  // main>work>leaf, main>work, other, main>other
  EXPECT_EQ(p.stacks().size(), 4u);
  EXPECT_EQ(p.threads().size(), 3u);
  EXPECT_EQ(p.samples().size(), 9u);
  EXPECT_TRUE(p.multiple_processes());
  EXPECT_DOUBLE_EQ(p.total_weight(), 10);
  EXPECT_EQ(p.end_us(), 60000);
}

TEST(ProfileModel, LaterThreadNameWinsButEmptyDoesNot) {
  Profile p;
  const auto a = p.add_thread({1, 2, 3, ""});
  EXPECT_EQ(p.add_thread({1, 2, 3, "named"}), a);
  EXPECT_EQ(p.add_thread({1, 2, 3, ""}), a);
  EXPECT_EQ(p.threads()[a].name, "named");
  EXPECT_NE(p.add_thread({1, 2, 4, "named"}), a);
}

TEST(ProfileModel, AddSnapshotTimesRelativeToStartAndKeepsInnermostFirst) {
  Profile p;
  model::Snapshot snap;
  snap.pid = 42;
  const auto start = std::chrono::steady_clock::now();
  snap.time = start + std::chrono::milliseconds(25);
  model::ThreadStack t;
  t.info = {42, 7, 8, "T"};
  t.frames = {test::leaf_frame(), test::main_frame()};
  snap.threads.push_back(t);
  p.add_snapshot(snap, start);
  ASSERT_EQ(p.samples().size(), 1u);
  EXPECT_EQ(p.samples().begin()->time_us, 25000);
  EXPECT_EQ(p.frames()[p.stacks()[0].front()], test::leaf_frame());
  EXPECT_EQ(p.threads()[0].pid, 42);
}

TEST(ProfileModel, FramesOfAnotherKindAreOtherFrames) {
  Profile p;
  model::Frame native = test::main_frame();
  native.kind = model::FrameKind::Native;
  const auto python = p.add_frame(test::main_frame());
  EXPECT_NE(p.add_frame(native), python);
  EXPECT_EQ(p.add_frame(test::main_frame()), python);
  EXPECT_EQ(p.frames()[1].kind, model::FrameKind::Native);
}

TEST(ProfileModel, FramesAreClassifiedOnceWhenAdded) {
  Profile p;
  const model::Frame pydevd{"do_wait_suspend", "/x/debugpy/_vendored/pydevd/pydevd.py", 2100,
                            model::FrameKind::Python, ""};
  const auto id = p.add_frame(pydevd);  // as the sampler gives it: origin not yet known
  EXPECT_EQ(p.frames()[id].origin, model::FrameOrigin::Debugger);
  EXPECT_EQ(p.add_frame(pydevd), id);
  EXPECT_EQ(p.frames()[p.add_frame(test::main_frame())].origin, model::FrameOrigin::Program);
}

TEST(CallTree, TotalsAndSelf) {
  Profile p;
  p.interval_us = 1;
  const auto t = p.add_thread({1, 1, 1, ""});
  const std::vector<model::Frame> a_b = {test::work_frame(),
                                         test::main_frame()};  // innermost first
  const std::vector<model::Frame> a = {test::main_frame()};
  p.add_sample(t, p.add_stack(a_b), 0);
  p.add_sample(t, p.add_stack(a_b), 1);
  p.add_sample(t, p.add_stack(a), 2, 3);
  const CallTree tree(p, {});
  ASSERT_EQ(tree.nodes().size(), 3u);  // root, main, work
  EXPECT_DOUBLE_EQ(tree.nodes()[0].total, 5);
  const auto& main = tree.nodes()[tree.nodes()[0].children.at(0)];
  EXPECT_EQ(tree.frames()[main.frame], test::main_frame());
  EXPECT_DOUBLE_EQ(main.total, 5);
  EXPECT_DOUBLE_EQ(main.self, 3);
  EXPECT_DOUBLE_EQ(tree.nodes()[main.children.at(0)].total, 2);
  EXPECT_EQ(tree.max_depth(), 2u);
  EXPECT_EQ(tree.sample_leaves(), (std::vector<std::uint32_t>{2, 2, 1}));
}

TEST(ProfileSummary, SelfAndTotalPerFunction) {
  const auto s = summarize(test::make_profile(test::sample_inputs()));
  EXPECT_DOUBLE_EQ(s.samples, 10);
  auto find = [&](const std::string& fn) {
    for (const auto& f : s.functions) {
      if (f.function == fn) return f;
    }
    ADD_FAILURE() << "no " << fn;
    return FunctionStats{};
  };
  // leaf: samples 1, 4, 5 and 6 (weight 2)
  EXPECT_DOUBLE_EQ(find("函数").self, 5);
  EXPECT_DOUBLE_EQ(find("函数").total, 5);
  EXPECT_DOUBLE_EQ(find("wörk<&>\"'").self, 3);
  EXPECT_DOUBLE_EQ(find("wörk<&>\"'").total, 8);
  EXPECT_DOUBLE_EQ(find("main").self, 0);
  EXPECT_DOUBLE_EQ(find("main").total, 9);
  EXPECT_DOUBLE_EQ(find("other").self, 2);
  EXPECT_EQ(s.functions.front().function, "函数");
  const auto text = format_summary(s, 2);
  EXPECT_NE(text.find("函数 (dir/ünï <&>.py)"), std::string::npos) << text;
  EXPECT_NE(text.find("50.00%"), std::string::npos) << text;
  // Two tables of at most two rows each.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 8) << text;
}

TEST(ProfileSummary, RecursionCountsOncePerSample) {
  Profile p;
  const auto t = p.add_thread({1, 1, 1, ""});
  const std::vector<model::Frame> rec = {test::main_frame(), test::main_frame(),
                                         test::main_frame()};
  p.add_sample(t, p.add_stack(rec), 0);
  const auto s = summarize(p);
  ASSERT_EQ(s.functions.size(), 1u);
  EXPECT_DOUBLE_EQ(s.functions[0].total, 1);
  EXPECT_DOUBLE_EQ(s.functions[0].self, 1);
}

TEST(FormatsText, XmlEscapeAndUtf8Repair) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape("ü函"), "ü函");
  EXPECT_EQ(xml_escape("x\x01y"), "x\xEF\xBF\xBDy");
  EXPECT_EQ(valid_utf8("a\xff"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(valid_utf8("\xC3"), "\xEF\xBF\xBD");                       // truncated sequence
  EXPECT_EQ(valid_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");       // overlong
  EXPECT_EQ(valid_utf8("\xED\xA0\x80").substr(0, 3), "\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(frame_label(test::main_frame()), "main (app.py:10)");
  EXPECT_EQ(frame_label(test::other_frame()), "other (app.py)");
}

}  // namespace
}  // namespace dapprof::formats
