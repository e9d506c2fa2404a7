#include "app/cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace dapprof::app::cli {

Progress::Progress() : enabled_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { clear(); }

void Progress::update(std::uint64_t samples, std::uint64_t errors,
                      std::chrono::steady_clock::duration elapsed) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < kPeriod) return;
  last_ = now;
  drawn_ = true;
  const double secs = std::chrono::duration<double>(elapsed).count();
  fmt::print(stderr, "\r\x1b[Kdapprof> {:.1f}s elapsed, {} samples, {} errors", secs, samples,
             errors);
  std::fflush(stderr);
}

void Progress::clear() {
  if (!drawn_) return;
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace dapprof::app::cli
