#pragma once
// py-spy's short file names, for the process being recorded: a path shortened to start at its
// top-level package, the outermost of the directories above it that hold an __init__.py
// (/usr/lib/python3.11/json/decoder.py -> json/decoder.py; /srv/app/main.py -> main.py).
// Looked up in the file system the process sees (/proc/PID/root), so a program in a container is
// shortened by its own files.
#include <sys/types.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "common/unique_fd.hpp"
#include "model/frame.hpp"

namespace dapprof::app::cli {

class ShortFilenames {
 public:
  // Names are looked up in the file system of the process at `pid`, from its root as it is at
  // the first call (make it once the process runs Python, after any chroot of its start: with
  // each snapshot), held so that names can still be shortened after it exits; later calls do
  // nothing. Without it, or if that root cannot be opened, in dapprof's own.
  void open_root(pid_t pid);
  // Shortens the files of frames[from...] now. A container's mounts (a bind-mounted /tmp)
  // vanish with its last process, so names are best learnt while the program runs.
  void learn(const std::vector<model::Frame>& frames, std::size_t from);

  // The short name of an absolute path; anything else ("<string>", "<frozen ...>", a relative
  // path) as it is.
  std::string operator()(const std::string& path);

 private:
  bool has_init(const std::string& directory) const;

  UniqueFd root_;
  bool root_opened_ = false;
  std::unordered_map<std::string, std::string> memo_;
};

}  // namespace dapprof::app::cli
