#include "app/cli/short_filenames.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace dapprof::app::cli {

void ShortFilenames::open_root(pid_t pid) {
  if (root_opened_) return;
  const std::string root = "/proc/" + std::to_string(pid) + "/root";
  root_ = UniqueFd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  root_opened_ = true;
  memo_.clear();
}

void ShortFilenames::learn(const std::vector<model::Frame>& frames, std::size_t from) {
  for (std::size_t i = from; i < frames.size(); ++i) (*this)(frames[i].file);
}

bool ShortFilenames::has_init(const std::string& directory) const {
  // Relative to the process's root: the path without its leading '/'.
  const std::string init = directory.substr(1) + "/__init__.py";
  return root_ && ::faccessat(root_.get(), init.c_str(), F_OK, 0) == 0;
}

std::string ShortFilenames::operator()(const std::string& path) {
  if (path.empty() || path.front() != '/') return path;
  if (!root_) root_ = UniqueFd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (auto it = memo_.find(path); it != memo_.end()) return it->second;
  // Climb while the directory is a package; the name starts below the first that is not.
  std::size_t start = path.rfind('/');
  while (start > 0) {
    const std::size_t parent = path.rfind('/', start - 1);
    if (!has_init(path.substr(0, start))) break;
    start = parent;
  }
  std::string short_name = path.substr(start + 1);
  if (short_name.empty()) short_name = path;
  return memo_.emplace(path, std::move(short_name)).first->second;
}

}  // namespace dapprof::app::cli
