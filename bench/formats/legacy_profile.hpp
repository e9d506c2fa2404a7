#pragma once
// The way formats::Profile added snapshots before the sample store and the previous-stack
// shortcut, kept verbatim as the benchmark's reference: every frame hashed (XXH3 over its
// strings) and looked up in a map keyed by a copy of the frame, a vector built per stack and
// looked up in a map keyed by a copy of it, and a 24-byte struct per sample.
#include <sys/types.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "formats/sample_store.hpp"
#include "model/frame.hpp"
#include "model/snapshot.hpp"
#include "model/thread_info.hpp"

namespace dapprof::bench {

class LegacyProfile {
 public:
  using Stack = std::vector<std::uint32_t>;

  std::uint32_t add_frame(const model::Frame& frame) {
    auto it = frame_ids_.find(frame);
    if (it != frame_ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(frames_.size());
    frames_.push_back(frame.origin == model::FrameOrigin::Program ? model::classified(frame)
                                                                  : frame);
    frame_ids_.emplace(frame, id);
    return id;
  }

  std::uint32_t add_stack(std::span<const model::Frame> innermost_first) {
    Stack stack;
    stack.reserve(innermost_first.size());
    for (const auto& f : innermost_first) stack.push_back(add_frame(f));
    auto it = stack_ids_.find(stack);
    if (it != stack_ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(stacks_.size());
    stacks_.push_back(stack);
    stack_ids_.emplace(std::move(stack), id);
    return id;
  }

  std::uint32_t add_thread(const model::ThreadInfo& thread) {
    const ThreadKey key{thread.pid, thread.thread_id, thread.os_thread_id};
    auto it = thread_ids_.find(key);
    if (it != thread_ids_.end()) {
      if (!thread.name.empty()) threads_[it->second].name = thread.name;
      return it->second;
    }
    const auto id = static_cast<std::uint32_t>(threads_.size());
    threads_.push_back(thread);
    thread_ids_.emplace(key, id);
    return id;
  }

  void add_snapshot(const model::Snapshot& snapshot, std::chrono::steady_clock::time_point start) {
    const auto t =
        std::chrono::duration_cast<std::chrono::microseconds>(snapshot.time - start).count();
    for (const auto& thread : snapshot.threads) {
      const auto tid = add_thread(thread.info);
      const auto stack = add_stack(thread.frames);
      samples_.push_back(
          formats::Sample{.thread = tid, .stack = stack, .time_us = std::max<std::int64_t>(t, 0)});
    }
  }

  std::size_t sample_count() const { return samples_.size(); }
  std::size_t stack_count() const { return stacks_.size(); }

 private:
  struct FrameHash {
    std::size_t operator()(const model::Frame& f) const {
      XXH64_hash_t h = XXH3_64bits(f.function.data(), f.function.size());
      h = XXH3_64bits_withSeed(f.file.data(), f.file.size(), h);
      h = XXH3_64bits_withSeed(f.module.data(), f.module.size(), h);
      const std::int64_t tail = (static_cast<std::int64_t>(f.line) << 3) |
                                (static_cast<std::int64_t>(f.origin) << 1) |
                                static_cast<std::int64_t>(f.kind);
      return static_cast<std::size_t>(XXH3_64bits_withSeed(&tail, sizeof tail, h));
    }
  };
  struct StackHash {
    std::size_t operator()(const Stack& s) const {
      return static_cast<std::size_t>(XXH3_64bits(s.data(), s.size() * sizeof(std::uint32_t)));
    }
  };
  struct ThreadKey {
    pid_t pid;
    std::uint64_t thread_id;
    std::uint64_t os_thread_id;
    bool operator==(const ThreadKey&) const = default;
  };
  struct ThreadKeyHash {
    std::size_t operator()(const ThreadKey& k) const {
      const std::uint64_t parts[3] = {static_cast<std::uint64_t>(k.pid), k.thread_id,
                                      k.os_thread_id};
      return static_cast<std::size_t>(XXH3_64bits(parts, sizeof parts));
    }
  };

  std::vector<model::Frame> frames_;
  std::unordered_map<model::Frame, std::uint32_t, FrameHash> frame_ids_;
  std::vector<Stack> stacks_;
  std::unordered_map<Stack, std::uint32_t, StackHash> stack_ids_;
  std::vector<model::ThreadInfo> threads_;
  std::unordered_map<ThreadKey, std::uint32_t, ThreadKeyHash> thread_ids_;
  std::vector<formats::Sample> samples_;
};

}  // namespace dapprof::bench
