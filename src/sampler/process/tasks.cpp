#include "sampler/process/tasks.hpp"

#include <dirent.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sampler/process/permissions.hpp"
#include "sampler/process/procfs.hpp"

namespace dapprof::sampler::process {
namespace {

std::optional<pid_t> parse_pid(std::string_view s) {
  pid_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}

std::vector<pid_t> numeric_entries(const std::string& dir, int& error) {
  std::vector<pid_t> out;
  DIR* d = opendir(dir.c_str());
  if (!d) {
    error = errno;
    return out;
  }
  error = 0;
  while (const dirent* e = readdir(d)) {
    if (auto v = parse_pid(e->d_name)) out.push_back(*v);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> slurp(const std::string& path) { return read_proc_file(path); }

// Fields of /proc/.../stat after the command name, which may itself contain spaces and ')'.
std::optional<std::string_view> stat_tail(const std::string& stat) {
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return std::nullopt;
  return std::string_view(stat).substr(close + 2);  // "S ppid ..."
}

}  // namespace

Result<std::vector<pid_t>> list_threads(pid_t pid) {
  int err = 0;
  auto tids = numeric_entries(fmt::format("/proc/{}/task", pid), err);
  if (err == EACCES || err == EPERM)
    return Error{permission_denied_message(pid, "list the threads of"),
                 ErrorCode::PermissionDenied};
  if (err != 0) return Error{fmt::format("no process with PID {}", pid), ErrorCode::NoSuchProcess};
  if (tids.empty()) return Error{fmt::format("process {} exited", pid), ErrorCode::ProcessExited};
  return tids;
}

Result<char> thread_state(pid_t pid, pid_t tid) {
  const auto stat = slurp(fmt::format("/proc/{}/task/{}/stat", pid, tid));
  if (!stat) {
    return Error{fmt::format("no thread {} in process {}", tid, pid), ErrorCode::NoSuchProcess};
  }
  const auto tail = stat_tail(*stat);
  if (!tail || tail->empty()) return Error{fmt::format("unreadable stat for thread {}", tid)};
  return tail->front();
}

bool thread_active(pid_t pid, pid_t tid) {
  const auto state = thread_state(pid, tid);
  return state.ok() && *state == 'R';
}

bool thread_gone(pid_t pid, pid_t tid) {
  const auto state = thread_state(pid, tid);
  return !state.ok() || *state == 'Z' || *state == 'X';
}

namespace {

// Every process's parent, from /proc/*/stat: the way when the kernel keeps no children lists.
std::vector<pid_t> descendants_by_walk(pid_t pid) {
  int err = 0;
  std::unordered_multimap<pid_t, pid_t> children;  // ppid -> pid
  for (pid_t p : numeric_entries("/proc", err)) {
    const auto stat = slurp(fmt::format("/proc/{}/stat", p));
    if (!stat) continue;  // exited meanwhile
    const auto tail = stat_tail(*stat);
    if (!tail || tail->size() < 3) continue;
    const auto rest = tail->substr(2);  // skip the state letter
    const auto ppid = parse_pid(rest.substr(0, rest.find(' ')));
    if (ppid) children.emplace(*ppid, p);
  }
  std::vector<pid_t> out;
  std::vector<pid_t> todo{pid};
  while (!todo.empty()) {
    const pid_t parent = todo.back();
    todo.pop_back();
    const auto [b, e] = children.equal_range(parent);
    for (auto it = b; it != e; ++it) {
      // pid reuse cannot produce a cycle in a consistent snapshot, but /proc is read over time.
      if (std::find(out.begin(), out.end(), it->second) != out.end() || it->second == pid) continue;
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The children each thread of `pid` started (/proc/PID/task/TID/children, a kernel built with
// CONFIG_PROC_CHILDREN); nullopt when the kernel keeps no such list. A thread or process that
// ends meanwhile has no children to give.
std::optional<std::vector<pid_t>> children_of(pid_t pid) {
  int err = 0;
  std::vector<pid_t> out;
  for (pid_t tid : numeric_entries(fmt::format("/proc/{}/task", pid), err)) {
    int read_error = 0;
    const auto list =
        read_proc_file(fmt::format("/proc/{}/task/{}/children", pid, tid), &read_error);
    if (!list) {
      if (read_error == ENOENT && !thread_gone(pid, tid)) return std::nullopt;
      continue;
    }
    std::string_view rest(*list);
    while (!rest.empty()) {
      const auto space = rest.find(' ');
      if (auto child = parse_pid(rest.substr(0, space))) out.push_back(*child);
      rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
    }
  }
  return out;
}

}  // namespace

std::vector<pid_t> descendants(pid_t pid) {
  // A machine runs hundreds of processes and a pool a few dozen: following the kernel's lists of
  // children down from pid reads a few files per descendant, where the walk reads every stat.
  std::vector<pid_t> out;
  std::vector<pid_t> todo{pid};
  while (!todo.empty()) {
    const pid_t parent = todo.back();
    todo.pop_back();
    const auto kids = children_of(parent);
    if (!kids) return descendants_by_walk(pid);
    for (pid_t kid : *kids) {
      if (kid == pid || std::find(out.begin(), out.end(), kid) != out.end()) continue;
      out.push_back(kid);
      todo.push_back(kid);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool in_process_tree(pid_t root, pid_t candidate) {
  if (candidate == root) return true;
  // Walk up from the candidate: cheaper than listing every process.
  pid_t p = candidate;
  for (int depth = 0; depth < 4096 && p > 1; ++depth) {
    const auto stat = slurp(fmt::format("/proc/{}/stat", p));
    if (!stat) return false;
    const auto tail = stat_tail(*stat);
    if (!tail || tail->size() < 3) return false;
    const auto rest = tail->substr(2);
    const auto ppid = parse_pid(rest.substr(0, rest.find(' ')));
    if (!ppid) return false;
    if (*ppid == root) return true;
    p = *ppid;
  }
  return false;
}

std::string process_name(pid_t pid) {
  auto comm = slurp(fmt::format("/proc/{}/comm", pid)).value_or("");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return comm;
}

Result<std::vector<pid_t>> TaskList::get(bool stale) {
  const auto now = Clock::now();
  if (stale || !listed_ || now - *listed_ > kMaxAge) {
    auto tids = list_threads(pid_);
    if (!tids) return tids.error();
    tids_ = std::move(*tids);
    listed_ = now;
  }
  return tids_;
}

}  // namespace dapprof::sampler::process
