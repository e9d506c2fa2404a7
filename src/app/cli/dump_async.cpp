// `dapprof dump --async`: the asyncio task tree of a running program, once.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/options.hpp"
#include "app/cli/task_tree.hpp"
#include "formats/async_tasks_json.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::app::cli {
namespace {

using Json = nlohmann::ordered_json;

// What the tree does not show, on stderr (stdout keeps pstree's shape).
void print_notes(const sampler::AsyncTasks& tasks) {
  if (tasks.torn > 0)
    fmt::print(stderr, "dapprof: note: {} task(s) changed while read and are left out\n",
               tasks.torn);
  if (tasks.truncated)
    fmt::print(stderr, "dapprof: note: stopped at {} tasks or {} coroutines per task\n",
               sampler::AsyncTasks::kMaxTasks, sampler::AsyncTasks::kMaxChain);
  for (const auto& m : tasks.missing) fmt::print(stderr, "dapprof: note: {}\n", m);
}

}  // namespace

int run_dump_async(sampler::PythonProcess& proc, const DumpOptions& options) {
  auto tasks = proc.async_tasks();
  // A read of a running program can be torn; another try usually succeeds.
  for (int attempt = 0; attempt < 10 && !tasks && tasks.code() == ErrorCode::TornRead; ++attempt)
    tasks = proc.async_tasks();
  if (!tasks) {
    fmt::print(stderr, "dapprof: error: reading the asyncio tasks of process {}: {}\n", proc.pid(),
               tasks.message());
    return 1;
  }
  if (options.json) {
    std::cout << formats::async_tasks_to_json(*tasks, proc.python_version())
                     .dump(2, ' ', false, Json::error_handler_t::replace)
              << '\n';
  } else {
    std::string cycle;
    const auto lines = task_tree(*tasks, cycle);
    if (!cycle.empty()) {
      fmt::print(stderr,
                 "dapprof: error: the tasks await each other in a cycle, which has no tree: {}\n",
                 cycle);
      return 1;
    }
    for (const auto& line : lines) fmt::print("{}\n", line);
  }
  print_notes(*tasks);
  std::cout.flush();
  std::fflush(stdout);
  return 0;
}

}  // namespace dapprof::app::cli
