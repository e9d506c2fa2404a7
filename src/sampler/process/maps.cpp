#include "sampler/process/maps.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "sampler/process/permissions.hpp"
#include "sampler/process/procfs.hpp"
#include "sampler/process/tasks.hpp"

namespace dapprof::sampler::process {
namespace {

// The file lists the address space the process had when the file was opened: one opened before
// an exec and read after it reads empty, as a zombie's does. A starting program may exec a few
// times (a shell, a launcher, the interpreter), so a live process's empty map is read again.
constexpr int kReadsOfAnEmptyMap = 3;

Result<std::vector<MapEntry>> read_once(pid_t pid) {
  const std::string path = fmt::format("/proc/{}/maps", pid);
  int error = 0;
  const auto text = read_proc_file(path, &error);
  if (!text) {
    if (error == EACCES || error == EPERM)
      return Error{permission_denied_message(pid, "read the memory map of"),
                   ErrorCode::PermissionDenied};
    return Error{fmt::format("no process with PID {}", pid), ErrorCode::NoSuchProcess};
  }
  std::vector<MapEntry> maps;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    // start-end perms offset dev inode [path]; the path may contain spaces.
    unsigned long long start = 0, end = 0, offset = 0, inode = 0;
    char perms[8] = {};
    int consumed = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %llu %n", &start, &end, perms, &offset,
                    &inode, &consumed) < 5)
      continue;
    MapEntry e;
    e.start = start;
    e.end = end;
    e.offset = offset;
    e.inode = inode;
    e.perms = perms;
    if (consumed > 0 && static_cast<std::size_t>(consumed) < line.size())
      e.path = line.substr(consumed);
    maps.push_back(std::move(e));
  }
  return maps;
}

}  // namespace

Result<std::vector<MapEntry>> read_maps(pid_t pid) {
  for (int read = 1;; ++read) {
    auto maps = read_once(pid);
    if (!maps || !maps->empty()) return maps;
    if (thread_gone(pid, pid)) {
      return Error{fmt::format("process {} exited", pid), ErrorCode::ProcessExited};
    }
    if (read == kReadsOfAnEmptyMap) {
      const std::string name = process_name(pid);
      return Error{fmt::format("process {} ({}) has no memory map: a kernel thread, not a "
                               "program",
                               pid, name.empty() ? "?" : name),
                   ErrorCode::Generic};
    }
  }
}

}  // namespace dapprof::sampler::process
