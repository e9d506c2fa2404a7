#include "app/cli/log_capture.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <mutex>

namespace dapprof::app::cli {

class LogCapture::Sink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::string latest() {
    std::lock_guard lock(mutex_);
    return latest_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (msg.level >= spdlog::level::warn) latest_.assign(msg.payload.data(), msg.payload.size());
  }
  void flush_() override {}

 private:
  std::string latest_;  // guarded by the base's mutex_
};

LogCapture::LogCapture() : sink_(std::make_shared<Sink>()), previous_(spdlog::default_logger()) {
  logger_ = std::make_shared<spdlog::logger>("dapprof-top", sink_);
  logger_->set_level(previous_ ? previous_->level() : spdlog::level::info);
  spdlog::set_default_logger(logger_);
}

LogCapture::~LogCapture() {
  if (previous_) spdlog::set_default_logger(previous_);
}

std::string LogCapture::latest() const { return sink_->latest(); }

}  // namespace dapprof::app::cli
