#include "formats/top_table.hpp"

#include <algorithm>
#include <functional>
#include <tuple>

namespace dapprof::formats {
namespace {

double share(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

std::size_t TopAggregator::KeyHash::operator()(const Key& k) const {
  const std::size_t h = std::hash<std::string>{}(k.function);
  return (h * 31 + std::hash<std::string>{}(k.file)) * 31 + std::hash<int>{}(k.line);
}

TopAggregator::Entry& TopAggregator::Table::at(const model::Frame& frame, int line) {
  auto [it, added] = index.try_emplace(Key{frame.function, frame.file, line}, entries.size());
  if (added) {
    Entry e;
    e.counts.where = frame;
    e.counts.where.line = line;
    entries.push_back(std::move(e));
  }
  return entries[it->second];
}

void TopAggregator::count(Table& table, const std::vector<model::Frame>& frames, bool by_line) {
  if (frames.empty()) return;
  const auto sample = thread_samples_;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    auto& e = table.at(frames[i], by_line ? frames[i].line : 0);
    if (i == 0) {
      ++e.counts.own;
      ++e.counts.window_own;
    }
    // A recursive function (or a line calling itself) is on the stack once per sample.
    if (e.last_sample == sample) continue;
    e.last_sample = sample;
    ++e.counts.total;
    ++e.counts.window_total;
  }
}

void TopAggregator::add(const model::Snapshot& snapshot) {
  ++samples_;
  bool gil = false;
  for (const auto& thread : snapshot.threads) {
    gil = gil || thread.owns_gil;
    if (thread.active) ++active_thread_samples_;
    count(functions_, thread.frames, false);
    count(lines_, thread.frames, true);
    ++thread_samples_;
    ++window_thread_samples_;
  }
  if (gil) ++gil_samples_;
}

TopFrame TopAggregator::take() {
  TopFrame frame;
  frame.interval_seconds = interval_seconds_;
  frame.samples = samples_;
  frame.thread_samples = thread_samples_;
  frame.window_thread_samples = window_thread_samples_;
  frame.gil_share = share(gil_samples_, samples_);
  frame.active_share = share(active_thread_samples_, thread_samples_);
  for (auto* table : {&functions_, &lines_}) {
    auto& out = table == &functions_ ? frame.functions : frame.lines;
    out.reserve(table->entries.size());
    for (auto& e : table->entries) {
      out.push_back(e.counts);
      e.counts.window_own = e.counts.window_total = 0;
    }
  }
  window_thread_samples_ = 0;
  return frame;
}

std::vector<TopRow> TopFrame::rows(TopGrouping grouping, TopSort sort) const {
  const auto& counts = grouping == TopGrouping::Function ? functions : lines;
  std::vector<const TopCounts*> order;
  order.reserve(counts.size());
  for (const auto& c : counts) order.push_back(&c);
  // Columns in order of precedence for each sort: the chosen one, then the others.
  const auto key = [sort](const TopCounts& c) {
    switch (sort) {
      case TopSort::OwnShare:
        return std::tuple(c.window_own, c.window_total, c.own, c.total);
      case TopSort::TotalShare:
        return std::tuple(c.window_total, c.window_own, c.total, c.own);
      case TopSort::OwnTime:
        return std::tuple(c.own, c.total, c.window_own, c.window_total);
      case TopSort::TotalTime:
        break;
    }
    return std::tuple(c.total, c.own, c.window_total, c.window_own);
  };
  std::stable_sort(order.begin(), order.end(), [&](const TopCounts* a, const TopCounts* b) {
    const auto ka = key(*a), kb = key(*b);
    if (ka != kb) return ka > kb;
    return std::tie(a->where.function, a->where.file, a->where.line) <
           std::tie(b->where.function, b->where.file, b->where.line);
  });
  std::vector<TopRow> rows;
  rows.reserve(order.size());
  for (const auto* c : order) {
    rows.push_back(TopRow{c->where, share(c->window_own, window_thread_samples),
                          share(c->window_total, window_thread_samples),
                          static_cast<double>(c->own) * interval_seconds,
                          static_cast<double>(c->total) * interval_seconds});
  }
  return rows;
}

}  // namespace dapprof::formats
