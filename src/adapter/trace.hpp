#pragma once
// --trace-dap FILE: every message in both directions as one JSON line
// {"time":…,"session":…,"direction":"client->dapprof","message":{…}}, for bug reports.
// Directions: client->dapprof, dapprof->debugpy, debugpy->dapprof, dapprof->client.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "protocol/json.hpp"

namespace dapprof::adapter {

class TraceWriter {
 public:
  static Result<std::shared_ptr<TraceWriter>> open(const std::string& path);
  explicit TraceWriter(std::FILE* file) : file_(file) {}
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void write(std::uint64_t session, std::string_view direction, const protocol::Json& message);

 private:
  std::mutex mutex_;
  std::FILE* file_;
};

}  // namespace dapprof::adapter
