#include "sampler/process/pid_namespace.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <string>
#include <string_view>

#include "sampler/process/procfs.hpp"

namespace dapprof::sampler::process {

std::vector<pid_t> namespace_pids(pid_t pid, pid_t tid) {
  const auto path = tid > 0 ? fmt::format("/proc/{}/task/{}/status", pid, tid)
                            : fmt::format("/proc/{}/status", pid);
  const auto status = read_proc_file(path);
  std::vector<pid_t> out;
  if (!status) return out;
  constexpr std::string_view kKey = "\nNSpid:";
  const auto at = status->find(kKey);
  if (at == std::string::npos) return out;
  const auto end = status->find('\n', at + kKey.size());
  const std::string_view line =
      std::string_view(*status).substr(at + kKey.size(), end - (at + kKey.size()));
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == ' ' || line[i] == '\t') {
      ++i;
      continue;
    }
    pid_t v = 0;
    const auto [p, ec] = std::from_chars(line.data() + i, line.data() + line.size(), v);
    if (ec != std::errc{} || v <= 0) return {};
    out.push_back(v);
    i = static_cast<std::size_t>(p - line.data());
  }
  return out;
}

pid_t innermost_pid(pid_t pid) {
  const auto ids = namespace_pids(pid);
  return ids.empty() ? pid : ids.back();
}

std::optional<std::uint64_t> pid_namespace(pid_t pid) {
  // "pid:[4026531836]"
  char link[64];
  const auto path = fmt::format("/proc/{}/ns/pid", pid);
  const ssize_t n = ::readlink(path.c_str(), link, sizeof link - 1);
  if (n <= 0) return std::nullopt;
  const std::string_view text(link, static_cast<std::size_t>(n));
  const auto open = text.find('[');
  if (open == std::string_view::npos) return std::nullopt;
  std::uint64_t inode = 0;
  const auto [p, ec] = std::from_chars(text.data() + open + 1, text.data() + text.size(), inode);
  if (ec != std::errc{} || p == text.data() + text.size() || *p != ']') return std::nullopt;
  return inode;
}

std::vector<pid_t> find_in_namespace(std::uint64_t ns, pid_t inner) {
  std::vector<pid_t> out;
  for (const pid_t pid : proc_pids()) {
    // The cheap test first: most processes have another inner PID.
    const auto ids = namespace_pids(pid);
    if (ids.empty() || ids.back() != inner) continue;
    if (pid_namespace(pid) == ns) out.push_back(pid);
  }
  return out;
}

std::vector<std::string> command_line(pid_t pid) {
  const auto raw = read_proc_file(fmt::format("/proc/{}/cmdline", pid));
  std::vector<std::string> out;
  if (!raw) return out;
  for (std::size_t i = 0; i < raw->size();) {
    const auto end = raw->find('\0', i);
    out.emplace_back(*raw, i, (end == std::string::npos ? raw->size() : end) - i);
    if (end == std::string::npos) break;
    i = end + 1;
  }
  return out;
}

}  // namespace dapprof::sampler::process
