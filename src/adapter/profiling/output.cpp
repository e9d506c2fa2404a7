#include "adapter/profiling/output.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "formats/debugger_view.hpp"
#include "formats/summary.hpp"
#include "formats/writers.hpp"

namespace dapprof::adapter::profiling {
namespace {

Error failed(const std::string& path, std::string_view detail) {
  return Error{fmt::format("Could not write the profile to {}: {}. Choose a writable path.", path,
                           detail),
               ErrorCode::OutputFailed};
}

}  // namespace

Status write_profile_file(const formats::Profile& profile, model::ProfileFormat format,
                          const formats::WriteOptions& options, const std::string& path) {
  const std::string temporary = fmt::format("{}.{}.tmp", path, ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return failed(path, std::strerror(errno));
    formats::write(format, profile, out, options);
    out.flush();
    if (!out) {
      const int error = errno;
      std::remove(temporary.c_str());
      return failed(path, error != 0 ? std::strerror(error) : "write error");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    return failed(path, std::strerror(error));
  }
  return Ok{};
}

std::vector<protocol::FunctionStats> top_functions(const formats::Profile& profile,
                                                   bool hide_debugger) {
  const auto summary =
      formats::summarize(hide_debugger ? formats::without_debugger(profile) : profile);
  std::vector<protocol::FunctionStats> rows;
  for (const auto& f : summary.functions) {
    if (rows.size() == protocol::kMaxTopFunctions) break;
    rows.push_back({f.function, f.file, f.self, f.total});
  }
  return rows;
}

}  // namespace dapprof::adapter::profiling
