#include "formats/top_table.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

namespace dapprof::formats {
namespace {

model::Frame frame(std::string function, int line, std::string file = "app.py") {
  return {std::move(function), std::move(file), line, model::FrameKind::Python, ""};
}

// One thread's stack, innermost first.
model::ThreadStack thread(std::vector<model::Frame> frames, bool active = true, bool gil = false) {
  model::ThreadStack t;
  t.info = {1, 7, 7, "MainThread"};
  t.active = active;
  t.owns_gil = gil;
  t.frames = std::move(frames);
  return t;
}

model::Snapshot snapshot(std::vector<model::ThreadStack> threads) {
  model::Snapshot s;
  s.pid = 1;
  s.threads = std::move(threads);
  return s;
}

const TopRow& row_of(const std::vector<TopRow>& rows, const std::string& function, int line = 0) {
  for (const auto& r : rows) {
    if (r.where.function == function && r.where.line == line) return r;
  }
  throw std::runtime_error("no row " + function);
}

TEST(TopTable, SharesOfTheWindowTimesSinceTheStart) {
  TopAggregator agg(0.01);
  const auto main = frame("main", 5), work = frame("work", 10), spin = frame("spin", 20);
  for (int i = 0; i < 3; ++i) agg.add(snapshot({thread({spin, work, main}, true, true)}));
  agg.add(snapshot({thread({work, main}, true, true)}));
  auto first = agg.take();
  EXPECT_EQ(first.samples, 4u);
  EXPECT_EQ(first.window_thread_samples, 4u);
  auto rows = first.rows(TopGrouping::Function, TopSort::OwnShare);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].where.function, "spin");
  EXPECT_DOUBLE_EQ(rows[0].own_share, 0.75);
  EXPECT_DOUBLE_EQ(rows[0].total_share, 0.75);
  EXPECT_DOUBLE_EQ(rows[0].own_seconds, 0.03);
  EXPECT_EQ(rows[0].where.line, 0);  // grouped by function: no line
  EXPECT_DOUBLE_EQ(row_of(rows, "main").total_share, 1.0);
  EXPECT_DOUBLE_EQ(row_of(rows, "main").own_share, 0.0);
  EXPECT_DOUBLE_EQ(first.gil_share, 1.0);

  // The next window only has `work` innermost: shares change, times keep accumulating.
  agg.add(snapshot({thread({work, main})}));
  const auto second = agg.take();
  rows = second.rows(TopGrouping::Function, TopSort::OwnShare);
  EXPECT_EQ(rows[0].where.function, "work");
  EXPECT_DOUBLE_EQ(rows[0].own_share, 1.0);
  EXPECT_DOUBLE_EQ(rows[0].own_seconds, 0.02);
  EXPECT_DOUBLE_EQ(row_of(rows, "spin").own_share, 0.0);
  EXPECT_DOUBLE_EQ(row_of(rows, "spin").own_seconds, 0.03);
  // By own time since the start, spin is still first.
  EXPECT_EQ(second.rows(TopGrouping::Function, TopSort::OwnTime)[0].where.function, "spin");
  // main and work were on every stack: work's own time breaks the tie.
  const auto by_total = second.rows(TopGrouping::Function, TopSort::TotalTime);
  EXPECT_EQ(by_total[0].where.function, "work");
  EXPECT_EQ(by_total[1].where.function, "main");
  EXPECT_DOUBLE_EQ(by_total[1].total_seconds, 0.05);
  EXPECT_DOUBLE_EQ(second.gil_share, 0.8);
}

TEST(TopTable, OwnSharesSumToAtMostOneAcrossThreads) {
  TopAggregator agg(0.01);
  const auto a = frame("a", 1), b = frame("b", 2);
  agg.add(snapshot({thread({a}), thread({b, a}, false), thread({})}));
  agg.add(snapshot({thread({b}), thread({a})}));
  const auto f = agg.take();
  EXPECT_EQ(f.thread_samples, 5u);
  EXPECT_DOUBLE_EQ(f.active_share, 0.8);
  const auto rows = f.rows(TopGrouping::Function, TopSort::TotalShare);
  const double own = std::accumulate(rows.begin(), rows.end(), 0.0,
                                     [](double s, const TopRow& r) { return s + r.own_share; });
  EXPECT_DOUBLE_EQ(own, 0.8);  // the empty stack is nobody's own time
  EXPECT_EQ(rows[0].where.function, "a");
  EXPECT_DOUBLE_EQ(rows[0].total_share, 0.6);
}

TEST(TopTable, LinesOfAFunctionAreSeparateRowsAndRecursionCountsOnce) {
  TopAggregator agg(0.5);
  const auto f10 = frame("f", 10), f11 = frame("f", 11), g = frame("g", 3, "lib.py");
  agg.add(snapshot({thread({f10, f11, f10, g})}));  // f recursive, at two lines
  agg.add(snapshot({thread({f11, g})}));
  const auto t = agg.take();
  const auto by_function = t.rows(TopGrouping::Function, TopSort::TotalTime);
  ASSERT_EQ(by_function.size(), 2u);
  EXPECT_DOUBLE_EQ(row_of(by_function, "f").total_seconds, 1.0);  // 2 samples, not 4
  EXPECT_DOUBLE_EQ(row_of(by_function, "f").own_share, 1.0);
  const auto by_line = t.rows(TopGrouping::Line, TopSort::OwnShare);
  ASSERT_EQ(by_line.size(), 3u);
  EXPECT_DOUBLE_EQ(row_of(by_line, "f", 10).own_share, 0.5);
  EXPECT_DOUBLE_EQ(row_of(by_line, "f", 10).total_share, 0.5);  // once, though twice on stack
  EXPECT_DOUBLE_EQ(row_of(by_line, "f", 11).total_share, 1.0);
  EXPECT_EQ(row_of(by_line, "g", 3).where.file, "lib.py");
}

TEST(TopTable, EmptyWindowHasZeroSharesAndTiesSortByName) {
  TopAggregator agg(0.01);
  agg.add(snapshot({thread({frame("zeta", 1)}), thread({frame("alpha", 1)})}));
  (void)agg.take();
  const auto idle = agg.take();
  EXPECT_EQ(idle.window_thread_samples, 0u);
  const auto rows = idle.rows(TopGrouping::Function, TopSort::OwnShare);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].where.function, "alpha");
  EXPECT_DOUBLE_EQ(rows[0].own_share, 0.0);
  EXPECT_DOUBLE_EQ(rows[0].own_seconds, 0.01);
}

}  // namespace
}  // namespace dapprof::formats
