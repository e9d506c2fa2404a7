#include "adapter/logging.hpp"

#include <fmt/format.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace dapprof::adapter {

Status setup_logging(const std::string& log_file, const std::string& level) {
  const auto parsed = spdlog::level::from_str(level);
  // from_str maps anything unknown to "off"; only accept that when asked for.
  if (parsed == spdlog::level::off && level != "off")
    return Error{fmt::format("unknown log level '{}': use trace, debug, info, warn, error, "
                             "critical or off",
                             level),
                 ErrorCode::InvalidArgument};
  std::shared_ptr<spdlog::logger> logger;
  try {
    if (log_file.empty())
      logger = std::make_shared<spdlog::logger>("dapprof",
                                                std::make_shared<spdlog::sinks::stderr_sink_mt>());
    else
      logger = std::make_shared<spdlog::logger>(
          "dapprof", std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file));
  } catch (const spdlog::spdlog_ex& e) {
    return Error{fmt::format("cannot open the log file '{}': {}", log_file, e.what()),
                 ErrorCode::InvalidArgument};
  }
  logger->set_level(parsed);
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [dapprof %P] [%l] %v");
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return Ok{};
}

}  // namespace dapprof::adapter
