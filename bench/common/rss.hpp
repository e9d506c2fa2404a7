#pragma once
// Resident memory of a process as the kernel counts it (VmRSS of /proc/PID/status).
#include <sys/types.h>

#include <fstream>
#include <optional>
#include <string>

namespace dapprof::bench {

// In KiB; nullopt if the process is gone. `pid` 0: this process.
inline std::optional<long> rss_kib(pid_t pid = 0) {
  std::ifstream status(pid == 0 ? std::string("/proc/self/status")
                                : "/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmRSS:")) return std::stol(line.substr(6));
  }
  return std::nullopt;
}

}  // namespace dapprof::bench
