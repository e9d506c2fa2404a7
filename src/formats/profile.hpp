#pragma once
// The profile model every writer reads: samples of (thread, stack) at a time, with frames and
// stacks interned so a long recording stays small.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "formats/sample_store.hpp"
#include "formats/stack_table.hpp"
#include "model/frame.hpp"
#include "model/process_info.hpp"
#include "model/snapshot.hpp"
#include "model/thread_info.hpp"

namespace dapprof::formats {

class Profile {
 public:
  using Stack = StackTable::Stack;  // frame indices, innermost first (as sampled)

  std::string name = "dapprof";      // title of the profile (program or pid)
  std::int64_t interval_us = 10000;  // sampling interval: how long one sample lasts
  std::int64_t duration_us = 0;      // length of the recording, if known
  std::int64_t start_unix_ns = 0;    // wall-clock time the recording started, 0 if unknown
  // A level per process above the threads even when only one was sampled: the run asked for
  // subprocesses (one that started none still says which process its samples are of).
  bool show_processes = false;

  std::uint32_t add_frame(const model::Frame& frame);
  std::uint32_t add_stack(std::span<const model::Frame> innermost_first);
  // The same for a stack sampled on `thread`: cheap when it shares frames with that thread's
  // previous sample (add_sample), as most stacks do.
  std::uint32_t add_stack(std::span<const model::Frame> innermost_first,
                          const model::ThreadInfo& thread);
  // Threads are identified by (pid, Python thread id, TID); a later non-empty name wins.
  std::uint32_t add_thread(const model::ThreadInfo& thread);
  void add_sample(std::uint32_t thread, std::uint32_t stack, std::int64_t time_us,
                  double weight = 1, ThreadState state = {});
  // What is known of a process of the samples. The latest word for a pid stays: a process that
  // exec'd (a pool's spawn or forkserver worker, a fork of its parent until then) is named by
  // the program it became, which it runs for the rest of its life.
  void add_process(const model::ProcessInfo& process);
  // One sample per thread of the snapshot, timed relative to start, with the thread's state; the
  // snapshot's process is added.
  void add_snapshot(const model::Snapshot& snapshot, std::chrono::steady_clock::time_point start);

  const std::vector<model::Frame>& frames() const { return stacks_.frames(); }
  const std::vector<Stack>& stacks() const { return stacks_.stacks(); }
  const std::vector<model::ThreadInfo>& threads() const { return threads_; }
  // In the order added; iterate them (each is decoded in turn), there is no indexing.
  const SampleStore& samples() const { return samples_; }

  double total_weight() const { return samples_.total_weight(); }
  // The end of the recording: duration_us, or past the last sample if that is later.
  std::int64_t end_us() const;
  bool multiple_processes() const;
  // Whether writers show processes: several were sampled, or show_processes.
  bool process_level() const { return show_processes || multiple_processes(); }
  // The processes known by add_process, by pid; a thread's pid may have no entry.
  const std::map<pid_t, model::ProcessInfo>& processes() const { return processes_; }
  // The entry of `pid`, or one with that pid and no command line.
  model::ProcessInfo process(pid_t pid) const;

 private:
  struct ThreadKey {
    pid_t pid;
    std::uint64_t thread_id;
    std::uint64_t os_thread_id;
    bool operator==(const ThreadKey&) const = default;
  };
  struct ThreadKeyHash {
    std::size_t operator()(const ThreadKey& k) const;
  };

  std::uint32_t stack_of(std::uint32_t thread, std::span<const model::Frame> innermost_first);

  StackTable stacks_;
  std::map<pid_t, model::ProcessInfo> processes_;
  std::vector<model::ThreadInfo> threads_;
  std::unordered_map<ThreadKey, std::uint32_t, ThreadKeyHash> thread_ids_;
  // Per thread, the stack of its latest sample (kNoStack before the first): where the next
  // stack of the thread is looked up first.
  static constexpr std::uint32_t kNoStack = ~std::uint32_t{0};
  std::vector<std::uint32_t> last_stack_;
  SampleStore samples_;
};

// The state the sampler saw a thread of a snapshot in.
ThreadState state_of(const model::ThreadStack& thread);

// "function (file:line)", py-spy's label for a frame; "(file)" without a line, bare name without
// a file.
std::string frame_label(const model::Frame& frame);
// Pseudo-frames that writers put above a stack's root when asked to tell threads or processes
// apart.
model::Frame thread_frame(const model::ThreadInfo& thread);
// `process PID:"command line"` as py-spy labels a process (`;` in the command line becomes `,`,
// which collapsed stacks would take for a frame boundary); `process PID` without one.
model::Frame process_frame(const model::ProcessInfo& process);

struct WriteOptions {
  bool threads = false;        // one root per thread (thread ids in the output)
  bool hide_debugger = false;  // without_debugger() first (formats::write applies it)
  // Frames that carry instructions (opcodes) keep them in speedscope too, as a frame per
  // instruction named after it (record --opcodes); false: speedscope's frames are lines, as a live
  // run's export keeps them (its instructions are for the editor). Gecko and pprof keep
  // instructions either way, where they do not change a frame's name.
  bool instruction_frames = false;
};

// The frames writers show for each sample, root first: the profile's frames plus thread/process
// pseudo-frames above the root when the options ask for threads or the profile shows processes
// (Profile::process_level).
class DisplayStacks {
 public:
  DisplayStacks(const Profile& profile, const WriteOptions& options);
  const std::vector<model::Frame>& frames() const { return frames_; }
  // Indices into frames(), root first.
  std::vector<std::uint32_t> path(const Sample& sample) const;

 private:
  const Profile& profile_;
  std::vector<model::Frame> frames_;
  std::vector<std::vector<std::uint32_t>> prefix_;  // per thread of the profile
};

}  // namespace dapprof::formats
