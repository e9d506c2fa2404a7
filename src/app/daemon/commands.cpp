#include "app/daemon/commands.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "adapter/logging.hpp"
#include "adapter/options.hpp"
#include "adapter/server.hpp"
#include "adapter/stdio.hpp"

namespace dapprof::app::daemon {

using namespace dapprof::adapter;
namespace {

struct Parsed {
  Options options;
  std::string connect;
};

void add_common(CLI::App& cmd, Parsed& p) {
  auto& o = p.options;
  cmd.add_option("--python", o.upstream.python,
                 "Python interpreter that runs `-m debugpy.adapter` for each session")
      ->capture_default_str();
  auto* connect = cmd.add_option(
      "--connect", p.connect,
      "HOST:PORT of a debugpy that listens (debugpy.listen) instead of spawning one");
  cmd.add_flag("--profile-only", o.upstream.profile_only,
               "No debugger: each session's launch starts a Python program (with --python "
               "unless the configuration names one) and attach names a running Python process "
               "(processId), which are profiled and otherwise left alone")
      ->excludes(connect);
  // One value per --env (repeat it for more): a vector option taking several values would also
  // swallow the words after it, and a `--` that follows would end only that option, leaving the
  // adapter command's own options (`--log-dir D`) to be parsed as dapprof's.
  cmd.add_option("--env", o.upstream.env,
                 "KEY=VALUE set in the spawned adapter's environment (replacing the variable "
                 "dapprof has); repeat for several")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check([](const std::string& v) {
        return v.find('=') == std::string::npos || v.front() == '='
                   ? std::string("expected KEY=VALUE")
                   : std::string();
      });
  cmd.add_option("--max-message-size", o.max_message_size,
                 "Largest DAP message body accepted from either peer, in bytes")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--max-pending-samples", o.max_pending_samples,
                 "Profiling samples kept for a client that reads slowly; beyond this the oldest "
                 "are dropped and reported in droppedSampleCount")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--log-file", o.log_file, "Write logs here instead of stderr");
  cmd.add_option("--log-level", o.log_level, "trace, debug, info, warn, error, critical, off")
      ->capture_default_str();
  cmd.add_option("--trace-dap", o.trace_dap,
                 "Append every DAP message, both ways, to FILE as JSON lines (for bug reports)");
  // Hidden: run this argv as the upstream adapter instead of PYTHON -m debugpy.adapter
  // (benchmarks; other adapters). Everything after `--`.
  cmd.add_option("adapter_command", o.upstream.adapter_command)->group("");
}

// Returns the exit code of a failed setup, or 0.
int finish_setup(Parsed& p) {
  if (auto ok = setup_logging(p.options.log_file, p.options.log_level); !ok) {
    fmt::print(stderr, "dapprof: {}\n", ok.message());
    return 2;
  }
  if (!p.connect.empty()) {
    auto where = parse_host_port(p.connect);
    if (!where) {
      spdlog::error("--connect: {}", where.message());
      return 2;
    }
    p.options.upstream.connect = *where;
  }
  return 0;
}

}  // namespace

void add_commands(CLI::App& app, int& exit_code) {
  auto stdio_parsed = std::make_shared<Parsed>();
  auto* stdio = app.add_subcommand(
      "stdio", "Debug adapter on stdin/stdout, one session (VS Code DebugAdapterExecutable)");
  add_common(*stdio, *stdio_parsed);
  stdio->callback([stdio_parsed, &exit_code] {
    exit_code = finish_setup(*stdio_parsed);
    if (exit_code == 0) exit_code = run_stdio(stdio_parsed->options);
  });

  auto serve_parsed = std::make_shared<Parsed>();
  auto* serve = app.add_subcommand(
      "serve", "Debug adapter server on TCP, one session per connection (launch.json debugServer)");
  add_common(*serve, *serve_parsed);
  auto& so = serve_parsed->options;
  serve->add_option("--listen", so.listen, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  serve->add_flag("--allow-remote", so.allow_remote,
                  "Allow a non-loopback --listen address (anyone who connects can run code)");
  serve->add_option("--port-file", so.port_file, "Write the listening port to FILE");
  serve->callback([serve_parsed, &exit_code] {
    exit_code = finish_setup(*serve_parsed);
    if (exit_code == 0) exit_code = run_serve(serve_parsed->options);
  });
}

}  // namespace dapprof::app::daemon
