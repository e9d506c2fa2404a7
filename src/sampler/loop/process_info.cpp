#include "sampler/loop/process_info.hpp"

#include "sampler/process/pid_namespace.hpp"

namespace dapprof::sampler::loop {

std::shared_ptr<const model::ProcessInfo> read_process_info(pid_t pid) {
  auto info = std::make_shared<model::ProcessInfo>();
  info->pid = pid;
  for (const auto& argument : process::command_line(pid)) {
    if (!info->command_line.empty()) info->command_line += ' ';
    info->command_line += argument;
  }
  return info;
}

}  // namespace dapprof::sampler::loop
