#pragma once
// A one-line progress display on stderr, only when stderr is a terminal.
#include <chrono>
#include <cstdint>

namespace dapprof::app::cli {

class Progress {
 public:
  Progress();
  ~Progress();  // clears the line
  // Redraws at most every kPeriod.
  void update(std::uint64_t samples, std::uint64_t errors,
              std::chrono::steady_clock::duration elapsed);
  void clear();
  bool enabled() const { return enabled_; }

  static constexpr std::chrono::milliseconds kPeriod{250};

 private:
  bool enabled_ = false;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace dapprof::app::cli
