#include "app/cli/child.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

extern char** environ;

namespace dapprof::app::cli {

Result<Child> Child::spawn(const std::vector<std::string>& argv, ChildIo io, int capture_fd) {
  if (argv.empty()) return Error{"no program to run", ErrorCode::InvalidArgument};
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  if (io == ChildIo::Null) {
    posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&files, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  } else if (io == ChildIo::Capture && capture_fd >= 0) {
    posix_spawn_file_actions_adddup2(&files, capture_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&files, capture_fd, STDERR_FILENO);
  }
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, cargv[0], &files, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Error{fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)),
                 rc == ENOENT ? ErrorCode::InvalidArgument : ErrorCode::Generic};
  }
  return Child(pid);
}

Child::Child(Child&& other) noexcept : pid_(other.pid_), exit_code_(other.exit_code_) {
  other.pid_ = -1;
}

Child::~Child() {
  if (pid_ > 0 && !exit_code_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
}

void Child::record(int status) {
  if (WIFEXITED(status)) {
    exit_code_ = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit_code_ = 128 + WTERMSIG(status);
  }
}

bool Child::poll() {
  if (exit_code_ || pid_ <= 0) return true;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) record(status);
  if (r < 0 && errno == ECHILD) exit_code_ = 0;  // reaped elsewhere: nothing more to learn
  return exit_code_.has_value();
}

int Child::wait() {
  while (!exit_code_ && pid_ > 0) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, 0);
    if (r == pid_) {
      record(status);
    } else if (r < 0 && errno != EINTR) {
      exit_code_ = 0;
    }
  }
  return exit_code_.value_or(0);
}

void Child::signal(int sig) const {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, sig);
}

}  // namespace dapprof::app::cli
