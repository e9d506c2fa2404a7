#include <algorithm>
#include <string_view>

#include "model/frame.hpp"

namespace dapprof::model {
namespace {

bool separator(char c) { return c == '/' || c == '\\'; }  // Windows paths too (remote debuggees)

// A path component that starts with `prefix`; `whole`: that is the whole component.
bool has_component(std::string_view path, std::string_view prefix, bool whole) {
  for (auto at = path.find(prefix); at != std::string_view::npos; at = path.find(prefix, at + 1)) {
    const auto end = at + prefix.size();
    if (at > 0 && separator(path[at - 1]) && (!whole || (end < path.size() && separator(path[end]))))
      return true;
  }
  return false;
}

// debugpy's package directory; pydevd's modules and packages (pydevd.py, pydevd_file_utils.py,
// _pydevd_bundle/, _pydev_bundle/, pydevd_attach_to_process/), vendored in debugpy or not.
bool in_debugger(std::string_view path) {
  return has_component(path, "debugpy", true) || has_component(path, "pydevd", false) ||
         has_component(path, "_pydev", false);
}

}  // namespace

FrameOrigin classify_origin(const Frame& frame) {
  if (in_debugger(frame.file)) return FrameOrigin::Debugger;
  if (frame.native() && in_debugger(frame.module)) return FrameOrigin::Debugger;
  return FrameOrigin::Program;
}

Frame classified(Frame frame) {
  frame.origin = classify_origin(frame);
  return frame;
}

Frame debugger_frame() {
  Frame f;
  f.function = "(debugger)";
  f.origin = FrameOrigin::Debugger;
  return f;
}

}  // namespace dapprof::model
