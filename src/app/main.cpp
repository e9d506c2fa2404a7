// dapprof: one executable; the daemon contributes stdio and serve, app/cli record and dump.
#include <CLI/CLI.hpp>

#include "app/cli/commands.hpp"
#include "app/daemon/commands.hpp"
#include "app/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dapprof: live profiling for Python programs debugged over DAP", "dapprof"};
  app.require_subcommand(1);
  app.set_version_flag("--version", dapprof::app::version_line());
  int exit_code = 0;
  dapprof::app::daemon::add_commands(app, exit_code);
  dapprof::app::cli::add_commands(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
