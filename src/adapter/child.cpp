#include "adapter/child.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

extern char** environ;

namespace dapprof::adapter {

Reaper::Reaper(asio::io_context& io) : io_(io), signals_(io, SIGCHLD) { arm(); }

Reaper::~Reaper() {
  kill_and_reap_all();
  asio::error_code ignored;
  signals_.cancel(ignored);
}

void Reaper::arm() {
  signals_.async_wait([this](const asio::error_code& ec, int) {
    if (ec) return;
    reap();
    arm();
  });
}

void Reaper::watch(pid_t pid, OnExit on_exit) {
  {
    std::lock_guard lock(mutex_);
    children_[pid].on_exit = std::move(on_exit);
  }
  // The child may have exited before it was registered: its SIGCHLD is already consumed.
  asio::post(io_, [this] { reap(); });
}

namespace {

// Whether `pid` has exited, leaving its status where waitpid finds it. A program that a
// profile-only session launched is also traced by the sampler (blocking mode pauses it with
// ptrace), and a tracer's waitpid reports its tracees' ptrace stops too: reaping those would
// take the stop the sampler waits for and mistake it for an exit. WNOWAIT only looks.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return errno == ECHILD;  // reaped already (a sampler's wait on a thread it traced)
  return info.si_pid == pid &&
         (info.si_code == CLD_EXITED || info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED);
}

}  // namespace

void Reaper::reap() {
  std::vector<std::pair<OnExit, int>> exited;
  {
    std::lock_guard lock(mutex_);
    for (auto it = children_.begin(); it != children_.end();) {
      int status = 0;
      if (!has_exited(it->first)) {
        ++it;
        continue;
      }
      const pid_t r = ::waitpid(it->first, &status, WNOHANG);
      if (r == it->first || (r < 0 && errno == ECHILD)) {
        spdlog::debug("child {} exited (status {:#x})", it->first, status);
        if (it->second.timer) it->second.timer->cancel();
        exited.emplace_back(std::move(it->second.on_exit), status);
        it = children_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& [callback, status] : exited)
    if (callback) callback(status);
}

void Reaper::escalate(pid_t pid, int signal, std::chrono::milliseconds grace) {
  std::shared_ptr<asio::steady_timer> timer;
  {
    std::lock_guard lock(mutex_);
    auto it = children_.find(pid);
    if (it == children_.end()) return;
    if (signal != 0) ::kill(pid, signal);
    if (signal == SIGKILL) return;  // reaped on SIGCHLD; nothing stronger to try
    timer = std::make_shared<asio::steady_timer>(io_, grace);
    if (it->second.timer) it->second.timer->cancel();
    it->second.timer = timer;
  }
  const int next = signal == 0 ? SIGTERM : SIGKILL;
  timer->async_wait([this, pid, next, grace](const asio::error_code& ec) {
    if (ec) return;
    spdlog::debug("child {} still running, sending {}", pid,
                  next == SIGTERM ? "SIGTERM" : "SIGKILL");
    escalate(pid, next, grace);
  });
}

void Reaper::release(pid_t pid, std::chrono::milliseconds grace) {
  {
    std::lock_guard lock(mutex_);
    auto it = children_.find(pid);
    if (it == children_.end()) return;  // already reaped: the pid may belong to someone else now
    it->second.on_exit = nullptr;
    if (stopped_) {  // the loop is gone: nothing would escalate, so end it now
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      children_.erase(it);
      return;
    }
  }
  escalate(pid, 0, grace);
}

void Reaper::terminate_all(std::chrono::milliseconds grace) {
  std::vector<pid_t> pids;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [pid, child] : children_) pids.push_back(pid);
  }
  for (pid_t pid : pids) escalate(pid, SIGTERM, grace);
}

std::size_t Reaper::live() const {
  std::lock_guard lock(mutex_);
  return children_.size();
}

void Reaper::kill_and_reap_all() {
  std::lock_guard lock(mutex_);
  stopped_ = true;
  for (auto& [pid, child] : children_) {
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  children_.clear();
}

namespace {

// Owns a pipe's two ends until they are handed over.
struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  int release(int i) {
    const int f = fd[i];
    fd[i] = -1;
    return f;
  }
};

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::spawn(Reaper& reaper,
                                                          const std::vector<std::string>& argv,
                                                          const std::vector<std::string>& extra_env,
                                                          Pipes& pipes, Reaper::OnExit on_exit,
                                                          const Setup& setup) {
  if (argv.empty()) return Error{"no command to run", ErrorCode::InvalidArgument};
  Pipe in, out, err;
  if (::pipe2(in.fd, O_CLOEXEC) != 0 || ::pipe2(out.fd, O_CLOEXEC) != 0 ||
      (setup.capture_stderr && ::pipe2(err.fd, O_CLOEXEC) != 0))
    return Error{fmt::format("cannot create pipes for {}: {}", setup.what, std::strerror(errno))};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], STDOUT_FILENO);
  if (setup.capture_stderr) posix_spawn_file_actions_adddup2(&actions, err.fd[1], STDERR_FILENO);
  if (!setup.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, setup.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The daemon ignores SIGPIPE and blocks nothing; give the child default dispositions.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGCHLD);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // An extra KEY=VALUE replaces the variable of the same name (programs take the first of
  // duplicates, so appending would not override); of several for one key, the last wins.
  const auto key_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<char*> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view key = key_of(*e);
    if (std::none_of(extra_env.begin(), extra_env.end(),
                     [&](const std::string& x) { return key_of(x) == key; }))
      env.push_back(*e);
  }
  for (std::size_t i = 0; i < extra_env.size(); ++i) {
    const std::string_view key = key_of(extra_env[i]);
    const bool overridden =
        std::any_of(extra_env.begin() + static_cast<std::ptrdiff_t>(i) + 1, extra_env.end(),
                    [&](const std::string& x) { return key_of(x) == key; });
    if (!overridden) env.push_back(const_cast<char*>(extra_env[i].c_str()));
  }
  env.push_back(nullptr);

  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return Error{fmt::format("cannot start {} '{}': {} {}", setup.what, argv[0], std::strerror(rc),
                             setup.hint)};
  reaper.watch(pid, std::move(on_exit));
  pipes.to_child = in.release(1);
  pipes.from_child = out.release(0);
  if (setup.capture_stderr) pipes.errors_from = err.release(0);
  return std::make_unique<ChildProcess>(reaper, pid);
}

ChildProcess::~ChildProcess() { reaper_.release(pid_, std::chrono::milliseconds(3000)); }

}  // namespace dapprof::adapter
