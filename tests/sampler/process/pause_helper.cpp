// Test helper: pauses a process with PausedProcess so that a test can SIGKILL us meanwhile.
//   pause_helper PID hold   pause once, print "paused", then sleep while holding the pause
//   pause_helper PID loop   pause and resume for ever, printing "paused N" every 100 pauses
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "sampler/process/pause.hpp"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const pid_t pid = static_cast<pid_t>(std::atoi(argv[1]));
  const std::string mode = argv[2];
  using dapprof::sampler::process::PausedProcess;
  if (mode == "hold") {
    auto paused = PausedProcess::pause(pid);
    if (!paused) {
      std::printf("error %s\n", paused.message().c_str());
      return 1;
    }
    std::printf("paused %zu\n", paused->threads().size());
    std::fflush(stdout);
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  for (unsigned long n = 1;; ++n) {
    auto paused = PausedProcess::pause(pid);
    if (!paused) {
      std::printf("error %s\n", paused.message().c_str());
      return 1;
    }
    // Hold each pause a little so that a kill is likely to land inside one.
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    if (n % 100 == 0) {
      std::printf("paused %lu\n", n);
      std::fflush(stdout);
    }
  }
}
