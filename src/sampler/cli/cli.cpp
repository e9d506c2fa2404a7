#include "sampler/cli/cli.hpp"

namespace dapprof::sampler::cli {
void add_commands(CLI::App& app, int& exit_code) {
  (void)app;
  (void)exit_code;
}
}  // namespace dapprof::sampler::cli
