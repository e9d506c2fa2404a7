#include "sampler/process/age.hpp"

#include <unistd.h>

#include <charconv>
#include <string>
#include <string_view>

#include "sampler/process/procfs.hpp"

namespace dapprof::sampler::process {
namespace {

// The 22nd field of /proc/PID/stat, starttime, in clock ticks since boot. The command name (the
// 2nd) may hold spaces and parentheses: fields are counted from the last ')'.
std::optional<double> start_ticks(const std::string& stat) {
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::string_view rest(stat);
  rest.remove_prefix(close + 1);
  constexpr int kFieldsAfterName = 20;  // fields 3..22
  for (int field = 0; field < kFieldsAfterName - 1; ++field) {
    const auto at = rest.find_first_not_of(' ');
    if (at == std::string_view::npos) return std::nullopt;
    const auto end = rest.find(' ', at);
    if (end == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(end);
  }
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  unsigned long long ticks = 0;
  if (std::from_chars(rest.data(), rest.data() + rest.size(), ticks).ec != std::errc{})
    return std::nullopt;
  return static_cast<double>(ticks);
}

}  // namespace

std::optional<std::chrono::milliseconds> process_age(pid_t pid) {
  const auto stat = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  const auto uptime = read_proc_file("/proc/uptime");
  if (!stat || !uptime) return std::nullopt;
  const auto ticks = start_ticks(*stat);
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (!ticks || hz <= 0) return std::nullopt;
  double up = 0;
  try {
    up = std::stod(*uptime);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const double age = up - *ticks / static_cast<double>(hz);
  return std::chrono::milliseconds(static_cast<long long>(std::max(0.0, age) * 1000));
}

}  // namespace dapprof::sampler::process
