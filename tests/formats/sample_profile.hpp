#pragma once
// A synthetic profile with awkward names (unicode, XML/JSON metacharacters, quotes), several
// threads and two processes, and the stacks it was built from, to check writers against.
#include <string>
#include <vector>

#include "formats/profile.hpp"

namespace dapprof::formats::test {

struct InputSample {
  pid_t pid;
  std::uint64_t thread_id;
  std::uint64_t os_thread_id;
  std::string thread_name;
  std::int64_t time_us;
  std::vector<model::Frame> root_first;
  double weight = 1;
};

inline model::Frame main_frame() { return {"main", "app.py", 10, model::FrameKind::Python, ""}; }
inline model::Frame work_frame() {
  return {"wörk<&>\"'", "dir/ünï <&>.py", 20, model::FrameKind::Python, ""};
}
inline model::Frame leaf_frame() {
  return {"函数", "dir/ünï <&>.py", 30, model::FrameKind::Python, ""};
}
inline model::Frame other_frame() { return {"other", "app.py", 0, model::FrameKind::Python, ""}; }

inline std::vector<InputSample> sample_inputs() {
  const auto m = main_frame(), w = work_frame(), l = leaf_frame(), o = other_frame();
  const std::string worker = "wörker \"1\" <&>";
  return {
      {100, 0x7f01, 1001, "MainThread", 0, {m, w, l}},
      {100, 0x7f02, 1002, worker, 0, {m, w}},
      {200, 0x7f03, 2001, "", 5000, {o}},
      {100, 0x7f01, 1001, "MainThread", 10000, {m, w, l}},
      {100, 0x7f02, 1002, worker, 10000, {m, w, l}},
      {200, 0x7f03, 2001, "", 15000, {m, w, l}, 2},
      {100, 0x7f01, 1001, "MainThread", 20000, {m, w}},
      {100, 0x7f01, 1001, "MainThread", 30000, {m, o}},
      {100, 0x7f02, 1002, worker, 50000, {m, w}},
  };
}

inline Profile make_profile(const std::vector<InputSample>& inputs) {
  Profile p;
  p.name = "fixture <&> \"ü\"";
  p.interval_us = 10000;
  p.duration_us = 60000;
  for (const auto& in : inputs) {
    std::vector<model::Frame> innermost_first(in.root_first.rbegin(), in.root_first.rend());
    const auto thread = p.add_thread({in.pid, in.thread_id, in.os_thread_id, in.thread_name});
    p.add_sample(thread, p.add_stack(innermost_first), in.time_us, in.weight);
  }
  return p;
}

}  // namespace dapprof::formats::test
