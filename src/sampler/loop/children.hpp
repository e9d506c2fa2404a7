#pragma once
// The Python processes among a process's descendants, for `subprocesses` sampling.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "sampler/process/exec_watch.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::sampler::loop {

class Children {
 public:
  using Clock = std::chrono::steady_clock;

  // window: how long a new descendant may take to become an initialised CPython before it is
  // ignored for good (a child that is not Python is ignored silently).
  Children(pid_t root, AttachOptions options, std::chrono::milliseconds window);

  // Attaches to descendants that became CPython since the last scan; forgets exited ones.
  void scan(Clock::time_point now);
  // Stops sampling a child (it exited, or exec'd: the next scan looks at it afresh).
  void drop(pid_t pid);

  struct Child {
    std::unique_ptr<PythonProcess> process;
    std::shared_ptr<const model::ProcessInfo> info;
    // Failed reads since its last good one: counted as errors only once a later read succeeds,
    // since most are of a worker caught ending, which is no error of sampling.
    unsigned failures_in_a_row = 0;
    // A child that exec'd is another program under the same pid: dropped and attached afresh.
    process::ExecWatch exec;
  };
  std::vector<Child>& attached() { return attached_; }

 private:
  pid_t root_;
  AttachOptions options_;
  std::chrono::milliseconds window_;
  std::vector<Child> attached_;
  std::map<pid_t, Clock::time_point> candidates_;  // first seen
  std::set<pid_t> ignored_;
};

}  // namespace dapprof::sampler::loop
