#include "sampler/process/procfs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

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

}  // namespace dapprof::sampler::process
