#include "adapter/trace.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "protocol/framing.hpp"

namespace dapprof::adapter {

Result<std::shared_ptr<TraceWriter>> TraceWriter::open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (!file)
    return Error{fmt::format("cannot open the DAP trace file '{}': {}", path, std::strerror(errno)),
                 ErrorCode::InvalidArgument};
  return std::make_shared<TraceWriter>(file);
}

TraceWriter::~TraceWriter() { std::fclose(file_); }

void TraceWriter::write(std::uint64_t session, std::string_view direction,
                        const protocol::Json& message) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const double seconds = std::chrono::duration<double>(now).count();
  // Built by hand so that the message keeps its key order and is serialised once.
  const std::string line =
      fmt::format("{{\"time\":{:.6f},\"session\":{},\"direction\":\"{}\",\"message\":{}}}\n",
                  seconds, session, direction, protocol::dump_json(message));
  std::lock_guard lock(mutex_);
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);  // a trace is read after a crash or a kill, so nothing may stay buffered
}

}  // namespace dapprof::adapter
