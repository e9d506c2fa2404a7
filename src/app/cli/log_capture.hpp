#pragma once
// While `dapprof top` owns the terminal, a log line written to stderr would land in the middle of
// the table: logs go to this instead, and the latest warning or error is shown in the status line.
#include <spdlog/logger.h>

#include <memory>
#include <string>

namespace dapprof::app::cli {

class LogCapture {
 public:
  LogCapture();   // replaces the default logger
  ~LogCapture();  // puts the previous one back
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // The latest message of level warning or above ("" if none), from any thread.
  std::string latest() const;

 private:
  class Sink;
  std::shared_ptr<Sink> sink_;
  // Kept alive until destruction: a thread may still hold the raw default logger pointer.
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace dapprof::app::cli
