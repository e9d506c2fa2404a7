#pragma once
// Everything `dapprof stdio` and `dapprof serve` can be told on the command line.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "protocol/backlog.hpp"
#include "protocol/framing.hpp"

namespace dapprof::adapter {

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};

// "HOST:PORT", "[v6]:PORT" or ":PORT" (loopback). The port may be 0 where a listener is meant.
Result<HostPort> parse_host_port(const std::string& text);

struct UpstreamOptions {
  std::string python = "python3";            // runs `PYTHON -m debugpy.adapter`
  std::optional<HostPort> connect;           // instead: a debugpy that listens
  std::vector<std::string> adapter_command;  // instead: this argv (benchmarks, other adapters)
  std::vector<std::string> env;              // extra KEY=VALUE for the spawned adapter
  // instead: no debugger, dapprof's own adapter (profile_only/adapter.hpp); `python` runs the
  // programs it launches
  bool profile_only = false;
};

struct Options {
  UpstreamOptions upstream;
  std::size_t max_message_size = protocol::kDefaultMaxBodyBytes;
  // Profiling samples held for a slow client before the oldest are dropped (and counted).
  std::size_t max_pending_samples = protocol::kDefaultMaxPendingSamples;
  std::string log_file;  // empty: stderr
  std::string log_level = "info";
  std::string trace_dap;  // empty: no trace
  // serve only
  std::string listen = "127.0.0.1:4711";
  bool allow_remote = false;
  std::string port_file;
};

}  // namespace dapprof::adapter
