#pragma once
// What the sampler benchmarks share: a child process started from an argv with its stdout piped
// back, the calling thread's CPU time, the median of rounds, and the interpreters the tests find.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace dapprof::bench {

// A program started from an argv (no shell, looked up on PATH), its stdout piped to us, killed
// and reaped on destruction.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    fd_ = out[0];
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }

  // The next line of its output, or nullopt after 30 s of silence or at its end.
  std::optional<std::string> read_line() {
    std::string line;
    char c;
    pollfd p{fd_, POLLIN, 0};
    while (poll(&p, 1, 30000) == 1 && read(fd_, &c, 1) == 1) {
      if (c == '\n') return line;
      line += c;
    }
    return std::nullopt;
  }

  // The last line it has written by now (waiting up to wait_ms for one if none is buffered),
  // the ones before it discarded: for a child that reports its progress continuously.
  std::optional<std::string> latest_line(int wait_ms = 1000) {
    std::optional<std::string> latest;
    char buf[4096];
    pollfd p{fd_, POLLIN, 0};
    int timeout = wait_ms;
    while (poll(&p, 1, timeout) == 1) {
      const ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      partial_.append(buf, static_cast<std::size_t>(n));
      for (auto nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n')) {
        latest = partial_.substr(0, nl);
        partial_.erase(0, nl + 1);
      }
      timeout = latest ? 0 : wait_ms;
    }
    return latest;
  }

  // Everything it writes until it closes its output.
  std::string read_all() {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd_, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string partial_;  // latest_line()'s unfinished line
};

// The middle value (the upper one of an even count); 0 for none. Figures of a noisy machine are
// compared as the median of interleaved rounds, which one slow round does not move.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// User + system CPU time of the calling thread, in seconds.
inline double thread_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct Interpreter {
  std::string label, path;
  std::string root;  // empty unless it runs in a root of its own (path is then a wrapper)
};

// The interpreters tests/support/pythons.py lists (`source_dir` is the repository); unless
// `all`, pyenv's 3.12 and Debian's 3.11 (a shared and a static libpython) and the Debian
// unstable root's 3.14 and 3.15 (the newest layouts), or all if none of them.
inline std::vector<Interpreter> interpreters(const std::string& source_dir, bool all) {
  Child list({"/usr/bin/python3", source_dir + "/tests/support/pythons.py"});
  std::istringstream lines(list.read_all());
  std::vector<Interpreter> found;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string label, path, version, root;
    if (!(in >> label >> path >> version >> root)) continue;
    found.push_back({label, path, root == "-" ? "" : root});
  }
  if (all) return found;
  std::vector<Interpreter> picked;
  for (const auto& i : found)
    if (i.label.starts_with("pyenv-3.12") || i.label.starts_with("debian") ||
        i.label == "sid-3.14" || i.label == "sid-3.15")
      picked.push_back(i);
  return picked.empty() ? found : picked;
}

}  // namespace dapprof::bench
