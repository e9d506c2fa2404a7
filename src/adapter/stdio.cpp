#include "adapter/stdio.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "adapter/runtime.hpp"

namespace dapprof::adapter {

int run_stdio(const Options& options) {
  Runtime runtime(options);
  if (auto ok = runtime.init(); !ok) {
    spdlog::error("{}", ok.message());
    return 2;
  }
  // The session takes private copies of fds 0 and 1; the originals then point at /dev/null, so
  // that nothing else in the process can ever write into the DAP stream by accident.
  const int in = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
  const int out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (in < 0 || out < 0) {
    spdlog::error("stdin/stdout are not usable");
    return 1;
  }
  if (const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC); null >= 0) {
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
  }
  runtime.start_session(in, out, [&runtime] { runtime.shutdown(); });
  const int code = runtime.run();
  spdlog::info("stopped");
  return code;
}

}  // namespace dapprof::adapter
