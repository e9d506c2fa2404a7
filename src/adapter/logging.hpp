#pragma once
// spdlog setup for the daemon: stderr or --log-file, never stdout (it may carry DAP).
#include <string>

#include "common/result.hpp"

namespace dapprof::adapter {

Status setup_logging(const std::string& log_file, const std::string& level);

}  // namespace dapprof::adapter
