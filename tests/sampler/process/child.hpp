#pragma once
// Test support: a child process started from an argv (no shell), with pipes to its stdin and
// stdout, killed and reaped on destruction; and the interpreters the tests run against.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace dapprof::test {

class Child {
 public:
  explicit Child(const std::vector<std::string>& argv);
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();

  pid_t pid() const { return pid_; }
  // Next line of the child's stdout, without the newline; nullopt on EOF or timeout (the
  // timeout only prevents a hang).
  std::optional<std::string> read_line(
      std::chrono::milliseconds timeout = std::chrono::seconds(30));
  void close_stdin();
  // Sends a signal and reaps the child; returns its wait status.
  int kill_and_wait(int sig);
  // Waits for the child to exit (reaps it); returns its wait status.
  int wait();
  // Waits until the child is a zombie, without reaping it.
  void wait_zombie();

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
  bool reaped_ = false;
};

struct Interpreter {
  std::string label;  // "pyenv-3.12.1", "debian-3.11", "sid-3.14"
  std::string path;   // what to run: for one in a root, a wrapper that enters the root
  int major = 0, minor = 0;
  std::string root;  // the file system it runs in (seen by the host through /proc/PID/root);
                     // empty for the host's own
};

// Every interpreter tests/support/pythons.py finds.
const std::vector<Interpreter>& interpreters();
// Debian's python (debugless, non-PIE, static libpython).
std::string system_python();
// A file under tests/sampler/process/targets.
std::string target_script(const std::string& name);

}  // namespace dapprof::test
