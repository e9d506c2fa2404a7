#pragma once
// What /proc tells about a process, for headers and default file names.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace dapprof::app::cli {

std::vector<std::string> command_line(pid_t pid);  // empty if unreadable
std::string executable(pid_t pid);                 // empty if unreadable
std::optional<int> thread_count(pid_t pid);        // its threads (tasks), if it still runs
// Arguments joined with spaces, for display only.
std::string joined(const std::vector<std::string>& args);

}  // namespace dapprof::app::cli
