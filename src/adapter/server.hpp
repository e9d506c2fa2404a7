#pragma once
// `dapprof serve`: a TCP acceptor, one session per connection, many at once.
#include "adapter/options.hpp"
#include "common/result.hpp"

namespace dapprof::adapter {

// Whether `host` may be listened on: loopback always; anything else only with allow_remote,
// since whoever connects can make debugpy run code.
Status check_listen_address(const std::string& host, bool allow_remote);

// Runs until SIGINT/SIGTERM; returns the process exit code.
int run_serve(const Options& options);

}  // namespace dapprof::adapter
