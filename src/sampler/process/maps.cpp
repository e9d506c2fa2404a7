#include "sampler/process/maps.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "sampler/process/permissions.hpp"
#include "sampler/process/procfs.hpp"

namespace dapprof::sampler::process {

Result<std::vector<MapEntry>> read_maps(pid_t pid) {
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
  if (maps.empty()) {
    // A zombie (or a process that exited while we read) has an empty map.
    return Error{fmt::format("process {} exited", pid), ErrorCode::ProcessExited};
  }
  return maps;
}

}  // namespace dapprof::sampler::process
