#include "child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace dapprof::test {

Child::Child(const std::vector<std::string>& argv) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  in_fd_ = in[1];
  out_fd_ = out[0];
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
}

Child::~Child() {
  if (!reaped_) kill_and_wait(SIGKILL);
  close_stdin();
  if (out_fd_ >= 0) ::close(out_fd_);
}

std::optional<std::string> Child::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{out_fd_, POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    char buf[4096];
    const ssize_t n = ::read(out_fd_, buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

void Child::close_stdin() {
  if (in_fd_ >= 0) ::close(in_fd_);
  in_fd_ = -1;
}

int Child::kill_and_wait(int sig) {
  if (reaped_) return 0;
  ::kill(pid_, sig);
  return wait();
}

int Child::wait() {
  // While a sampler pauses the child, this process is its tracer too: a ptrace stop may be
  // reported here. Only an exit counts.
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid_, &status, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r == pid_ && WIFSTOPPED(status)) continue;
    break;
  }
  reaped_ = true;
  return status;
}

void Child::wait_zombie() {
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
}

const std::vector<Interpreter>& interpreters() {
  static const std::vector<Interpreter> list = [] {
    std::vector<Interpreter> out;
    Child c({system_python(), DAPPROF_SOURCE_DIR "/tests/support/pythons.py"});
    while (auto line = c.read_line(std::chrono::seconds(60))) {
      std::istringstream in(*line);
      Interpreter i;
      std::string version, root;
      in >> i.label >> i.path >> version >> root;
      if (root != "-") i.root = root;
      if (std::sscanf(version.c_str(), "%d.%d", &i.major, &i.minor) == 2) out.push_back(i);
    }
    c.wait();
    return out;
  }();
  return list;
}

std::string system_python() { return "/usr/bin/python3"; }

std::string target_script(const std::string& name) {
  return DAPPROF_SOURCE_DIR "/tests/sampler/process/targets/" + name;
}

}  // namespace dapprof::test
