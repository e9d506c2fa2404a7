#include "adapter/cli.hpp"

namespace dapprof::adapter {
void add_commands(CLI::App& app, int& exit_code) {
  (void)app;
  (void)exit_code;
}
}  // namespace dapprof::adapter
