#pragma once
// The program a sampler benchmark samples: work.py at a stack depth, started through a
// launcher as debugpy starts a debuggee, and its progress, which tells how much a sampler
// slows it.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "../common/harness.hpp"

namespace dapprof::bench {

// sys.executable, not the path we ran: for an interpreter in a root of its own that path is a
// wrapper for the host, and this runs inside the root.
constexpr const char* kLauncher =
    "import subprocess, sys\n"
    "p = subprocess.Popen([sys.executable] + sys.argv[1:], stdout=sys.stdout)\n"
    "print(p.pid, flush=True)\n"
    "p.wait()\n";

// The target's progress: iterations of its loop per second, from its reports.
class Progress {
 public:
  explicit Progress(Child& target) : target_(target) {}
  // Marks now; returns the rate since the previous mark.
  std::optional<double> mark() {
    const auto line = target_.latest_line();
    if (!line) return std::nullopt;
    double iterations = 0, seconds = 0;
    if (std::sscanf(line->c_str(), "%lf %lf", &iterations, &seconds) != 2) return std::nullopt;
    std::optional<double> rate;
    if (last_ && seconds > last_->second) {
      rate = (iterations - last_->first) / (seconds - last_->second);
    }
    last_ = {iterations, seconds};
    return rate;
  }

 private:
  Child& target_;
  std::optional<std::pair<double, double>> last_;
};

// The program's work rate over the next `seconds`, whatever samples it meanwhile.
inline std::optional<double> work_rate(Progress& progress, double seconds) {
  progress.mark();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return progress.mark();
}

// work.py at `depth` with `idle` sleeping threads besides. Like a debuggee launched by debugpy,
// the target is not our child: an intermediate process starts it (dapprof pauses its own
// children differently, see pause.cpp).
struct Target {
  Target(const Interpreter& interp, int depth, int idle)
      : launcher({interp.path, "-c", kLauncher, DAPPROF_SOURCE_DIR "/bench/sampler/work.py",
                  std::to_string(depth), std::to_string(idle)}) {
    const auto pid_line = launcher.read_line();
    pid = pid_line ? static_cast<pid_t>(std::stol(*pid_line)) : -1;
    if (pid > 0 && launcher.read_line() != "ready") {
      kill(pid, SIGKILL);
      pid = -1;
    }
  }
  ~Target() {
    if (pid > 0) kill(pid, SIGKILL);
  }
  Child launcher;
  pid_t pid = -1;
};

}  // namespace dapprof::bench
