#pragma once
// What `dapprof top` shows, as lines of text: the header (process, rates, shares, state), the
// table and the key help. Drawing them is the Terminal's job; printing them once, the plain mode's.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/top_table.hpp"

namespace dapprof::app::cli {

enum class DisplayState { Live, Paused };  // paused: the table is not refreshed
enum class TargetState { Running, Exited, Failed };

struct TopHeader {
  pid_t pid = 0;
  std::string command;
  std::string python_version;
  double rate_hz = 100;
  std::uint64_t errors = 0;
  std::optional<int> threads;  // the process's, as /proc last showed them
  std::chrono::steady_clock::duration elapsed{};
  TargetState target = TargetState::Running;
  std::string target_note;  // how it exited ("with status 0"), or why sampling failed
  std::string warning;      // the latest one, for the status line
};

struct TopView {
  formats::TopSort sort = formats::TopSort::OwnShare;
  formats::TopGrouping grouping = formats::TopGrouping::Function;
  DisplayState display = DisplayState::Live;
};

// The screen for a terminal of `rows` lines: header, table rows that fit, key help on the last.
std::vector<std::string> screen_lines(const TopHeader& header, const formats::TopFrame& frame,
                                      const TopView& view, std::size_t rows);
// Header and every row, without key help: for a stdout that is not a terminal.
std::vector<std::string> plain_lines(const TopHeader& header, const formats::TopFrame& frame,
                                     const TopView& view);

}  // namespace dapprof::app::cli
