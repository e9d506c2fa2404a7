#include "sampler/process/target_files.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <array>

namespace dapprof::sampler::process {

std::string target_file_path(pid_t pid, const std::string& path, std::uint64_t inode) {
  const std::array<std::string, 2> candidates{fmt::format("/proc/{}/root{}", pid, path), path};
  std::array<bool, 2> exists{};
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    struct stat st {};
    if (::stat(candidates[i].c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    exists[i] = true;
    if (inode == 0 || static_cast<std::uint64_t>(st.st_ino) == inode) return candidates[i];
  }
  // No inode matched: overlay file systems (container images) may show another inode in the map
  // than stat does. The target's own view is then the better guess.
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (exists[i]) return candidates[i];
  }
  return path;
}

}  // namespace dapprof::sampler::process
