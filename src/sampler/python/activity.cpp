#include "sampler/python/activity.hpp"

#include <string_view>

namespace dapprof::sampler::python {
namespace {

struct Waiter {
  std::string_view file;      // basename of the stdlib module
  std::string_view function;  // co_name or co_qualname
};

constexpr Waiter kWaiters[] = {
    {"threading.py", "wait"},
    {"threading.py", "Condition.wait"},
    {"threading.py", "Event.wait"},
    {"threading.py", "_wait_for_tstate_lock"},
    {"threading.py", "Thread._wait_for_tstate_lock"},
    {"selectors.py", "select"},
    {"selectors.py", "EpollSelector.select"},
    {"selectors.py", "_PollLikeSelector.select"},
    {"socket.py", "accept"},
    {"socket.py", "socket.accept"},
};

std::string_view basename(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool in_waiting_function(std::span<const model::Frame> frames) {
  if (frames.empty()) return false;
  const model::Frame& top = frames.front();
  const std::string_view file = basename(top.file);
  for (const auto& w : kWaiters) {
    if (w.file == file && w.function == top.function) return true;
  }
  return false;
}

}  // namespace dapprof::sampler::python
