#pragma once
// Snapshots of a made-up program for the benchmarks of the profile: one thread (or several) whose
// stack is DEPTH frames deep, of which one frame varies among a few lines from one snapshot to
// the next, as a program busy in one place does. Every snapshot owns its strings, as the
// sampler's do.
#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <vector>

#include "model/snapshot.hpp"

namespace dapprof::bench {

struct SyntheticStacks {
  std::size_t depth = 100;
  std::size_t variants = 4;  // distinct stacks: lines of the varying frame
  std::size_t varying = 0;   // which frame varies, 0 = innermost
  std::size_t threads = 1;
};

// `shape.variants` snapshots, each with `shape.threads` threads, taken at `start`.
inline std::vector<model::Snapshot> synthetic_snapshots(
    const SyntheticStacks& shape, std::chrono::steady_clock::time_point start) {
  std::vector<model::Snapshot> out;
  for (std::size_t v = 0; v < shape.variants; ++v) {
    model::Snapshot snap;
    snap.pid = 4242;
    snap.time = start;
    for (std::size_t t = 0; t < shape.threads; ++t) {
      model::ThreadStack thread;
      thread.info = {4242, 0x7f0000001000 + t, 5000 + t,
                     t == 0 ? "MainThread" : fmt::format("worker-{}", t)};
      thread.active = true;
      for (std::size_t i = 0; i < shape.depth; ++i) {  // innermost first
        model::Frame f;
        f.function = fmt::format("handler_{}", (shape.depth - i) % 37);
        f.file = fmt::format("/srv/app/venv/lib/python3.12/site-packages/service/layer_{}.py",
                             (shape.depth - i) % 11);
        f.line = static_cast<int>(10 + (shape.depth - i) % 200);
        if (i == shape.varying) f.line += static_cast<int>(v);
        thread.frames.push_back(std::move(f));
      }
      snap.threads.push_back(std::move(thread));
    }
    out.push_back(std::move(snap));
  }
  return out;
}

}  // namespace dapprof::bench
