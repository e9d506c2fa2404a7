#pragma once
// The table of `dapprof top`: per function (or per line), how often it was the innermost frame
// (own) and on the stack (total), both in the latest refresh window (the shares, as py-spy's
// %Own and %Total) and since the start (the times, as py-spy's OwnTime and TotalTime).
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/frame.hpp"
#include "model/snapshot.hpp"

namespace dapprof::formats {

// What a row stands for: a function (name and file), or one line of it.
enum class TopGrouping { Function, Line };
// The column rows are sorted by, descending.
enum class TopSort { OwnShare, TotalShare, OwnTime, TotalTime };

struct TopRow {
  model::Frame where;      // line 0 when grouped by function
  double own_share = 0;    // of the window's thread samples, 0..1
  double total_share = 0;  // idem; counted once per sample even if recursive
  double own_seconds = 0;  // since the start, summed over threads
  double total_seconds = 0;
};

// Counts of one function or line.
struct TopCounts {
  model::Frame where;
  std::uint64_t own = 0, total = 0;                // since the start
  std::uint64_t window_own = 0, window_total = 0;  // since the window began
};

// One refresh of the table: the counts frozen when it was taken, so that a paused display can
// still be re-sorted or regrouped.
struct TopFrame {
  double interval_seconds = 0.01;    // one sample's worth of time
  std::uint64_t samples = 0;         // snapshots since the start
  std::uint64_t thread_samples = 0;  // stacks since the start (one per thread per snapshot)
  std::uint64_t window_thread_samples = 0;
  double gil_share = 0;     // of snapshots, those in which a sampled thread held the GIL
  double active_share = 0;  // of thread samples, those of a running (not idle) thread
  std::vector<TopCounts> functions;
  std::vector<TopCounts> lines;

  // Every function or line seen, best first by `sort` (ties: the other columns, then name).
  std::vector<TopRow> rows(TopGrouping grouping, TopSort sort) const;
};

// Fed snapshot by snapshot (not thread-safe: callers lock), so that a refresh costs the number of
// distinct functions, not of samples.
class TopAggregator {
 public:
  explicit TopAggregator(double interval_seconds) : interval_seconds_(interval_seconds) {}

  void add(const model::Snapshot& snapshot);
  // The counts so far; a new window starts.
  TopFrame take();

 private:
  struct Key {
    std::string function, file;
    int line;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  struct Entry {
    TopCounts counts;
    std::uint64_t last_sample = ~std::uint64_t{0};  // the thread sample it was last counted in
  };
  struct Table {
    std::unordered_map<Key, std::size_t, KeyHash> index;
    std::vector<Entry> entries;
    Entry& at(const model::Frame& frame, int line);
  };
  void count(Table& table, const std::vector<model::Frame>& frames, bool by_line);

  double interval_seconds_;
  std::uint64_t samples_ = 0, thread_samples_ = 0, window_thread_samples_ = 0;
  std::uint64_t gil_samples_ = 0, active_thread_samples_ = 0;
  Table functions_, lines_;
};

}  // namespace dapprof::formats
