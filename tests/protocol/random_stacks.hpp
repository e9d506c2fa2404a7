#pragma once
// Deterministic random stacks for the round-trip tests and the schema emitter: deep stacks, many
// threads, non-ASCII names and native frames, like a real multi-threaded program.
#include <sys/types.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/snapshot.hpp"

namespace dapprof::protocol::testing {

inline const std::vector<std::string>& unicode_words() {
  static const std::vector<std::string> words = {
      "main", "calc", "café", "naïve_λ", "函数", "日本語", "🐍snake", "Ωmega", "straße", "ключ",
  };
  return words;
}

class RandomStacks {
 public:
  explicit RandomStacks(std::uint64_t seed, std::size_t frame_pool = 300, std::size_t threads = 6)
      : rng_(seed) {
    const auto& words = unicode_words();
    for (std::size_t i = 0; i < frame_pool; ++i) {
      model::Frame f;
      f.function = words[pick(words.size())] + "_" + std::to_string(i);
      if (i % 10 == 9) {  // some native frames, as with native: true
        f.kind = model::FrameKind::Native;
        f.module = "/usr/lib/lib" + words[pick(words.size())] + ".so.1";
        f.file = i % 20 == 19 ? "" : "src/" + words[pick(words.size())] + ".c";
        f.line = static_cast<int>(pick(2)) * static_cast<int>(pick(5000));
      } else if (i % 10 == 7) {  // some asyncio tasks' frames, as with async sampling
        f = model::task_frame("Task-" + std::to_string(i),
                              static_cast<model::TaskState>(pick(4)));
      } else if (i % 10 == 4) {  // some of the debugger's own frames (origin "debugger")
        f.file = "/usr/lib/python3/dist-packages/debugpy/_vendored/pydevd/pydevd_" +
                 words[pick(words.size())] + ".py";
        f.line = 1 + static_cast<int>(pick(4000));
      } else {
        f.file = "/app/" + words[pick(words.size())] + "/mod_" + std::to_string(i % 37) + ".py";
        f.line = 1 + static_cast<int>(pick(4000));
      }
      frames_.push_back(std::move(f));
    }
    for (std::size_t t = 0; t < threads; ++t) {
      model::ThreadStack thread;
      thread.info.pid = pid();
      thread.info.os_thread_id = 4000 + 17 * t;
      // Python idents are pthread addresses, far above 2^53.
      thread.info.thread_id = 0x7f0000000000ull * 1024 + 0x1000 * t + 0x700;
      thread.info.name = t == 0 ? "MainThread" : "worker-" + words[pick(words.size())];
      threads_.push_back(std::move(thread));
    }
  }

  pid_t pid() const { return 4242; }
  std::size_t thread_count() const { return threads_.size(); }
  model::ThreadStack& thread(std::size_t i) { return threads_[i]; }

  // One thread's stack, innermost first as the sampler gives it, depth 1..max_depth.
  model::ThreadStack next(std::size_t max_depth = 200) {
    model::ThreadStack thread = threads_[pick(threads_.size())];
    const std::size_t depth = 1 + pick(max_depth);
    for (std::size_t i = 0; i < depth; ++i) thread.frames.push_back(frames_[pick(frames_.size())]);
    return thread;
  }

  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

 private:
  std::mt19937_64 rng_;
  std::vector<model::Frame> frames_;
  std::vector<model::ThreadStack> threads_;
};

}  // namespace dapprof::protocol::testing
