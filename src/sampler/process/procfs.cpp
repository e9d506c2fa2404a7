#include "sampler/process/procfs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <memory>
#include <string_view>

namespace dapprof::sampler::process {

std::optional<std::string> read_proc_file(const std::string& path, int* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = errno;
    return std::nullopt;
  }
  std::string out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      if (error) *error = errno;
      ::close(fd);
      return std::nullopt;
    }
  }
  ::close(fd);
  if (error) *error = 0;
  return out;
}

std::optional<std::vector<std::string>> list_directory(const std::string& path, int* error) {
  const std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(path.c_str()), &::closedir);
  if (!dir) {
    if (error) *error = errno;
    return std::nullopt;
  }
  std::vector<std::string> out;
  while (const dirent* e = ::readdir(dir.get())) {
    const std::string_view name(e->d_name);
    if (name != "." && name != "..") out.emplace_back(name);
  }
  if (error) *error = 0;
  return out;
}

std::vector<pid_t> proc_pids() {
  std::vector<pid_t> out;
  for (const auto& name : list_directory("/proc").value_or(std::vector<std::string>{})) {
    pid_t pid = 0;
    const auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (ec == std::errc{} && p == name.data() + name.size() && pid > 0) out.push_back(pid);
  }
  return out;
}

}  // namespace dapprof::sampler::process
