#pragma once
// Builds the profilingData event body from the sampler's stacks, one batch per event. Batches stay
// plain structs until sent, so a session behind a slow client can merge them or drop their
// samples; frame, stack and thread definitions are never dropped (each is announced only once).
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "model/process_info.hpp"
#include "model/snapshot.hpp"
#include "model/thread_info.hpp"
#include "protocol/frame_table.hpp"
#include "protocol/instruction_counts.hpp"
#include "protocol/json.hpp"
#include "protocol/stack_ids.hpp"

namespace dapprof::protocol {

// Threads are identified by their Linux thread id (TID, model::ThreadInfo::os_thread_id): unique
// on the system among running threads and small enough for JavaScript, unlike Python's idents
// (pthread addresses > 2^53, sent as decimal strings).
using ThreadId = std::uint64_t;

struct FrameDefinition {
  FrameId id = 0;
  model::Frame frame;
};

struct StackDefinition {
  StackId id = 0;
  std::vector<FrameId> frames;  // root first
};

// Consecutive samples of one thread with one stack: what a run started with `stacks` sends.
struct StackRun {
  ThreadId thread = 0;
  StackId stack = 0;
  std::uint64_t count = 0;
  bool operator==(const StackRun&) const = default;
};

// How samples go on the wire: each as its frame IDs (the default), or, when the client asked for
// `stacks`, as runs of stack IDs, each distinct stack announced once.
enum class Encoding { Frames, Stacks };

// A process's announcement: when first sampled, and once more when it ends.
struct ProcessAnnouncement {
  model::ProcessInfo process;
  bool exited = false;
  bool operator==(const ProcessAnnouncement&) const = default;
};

struct ProfilingBatch {
  Encoding encoding = Encoding::Frames;
  std::vector<FrameDefinition> new_frames;     // frames referenced for the first time in this run
  std::vector<StackDefinition> new_stacks;     // Stacks: stacks used for the first time in this run
  std::vector<model::ThreadInfo> threads;      // threads first seen, or whose name/ident changed
  std::vector<ProcessAnnouncement> processes;  // in the order they happened
  std::vector<std::vector<FrameId>> samples;   // Frames: one stack per thread per tick, root first
  std::vector<ThreadId> thread_ids;            // Frames: parallel to samples
  std::vector<StackRun> runs;                  // Stacks: the samples in the order taken
  double duration_ms = 0;                      // wall time covered by the batch
  // Wall-clock times (ms since the Unix epoch) of the first and last sample, if any.
  std::optional<double> start_time_ms, end_time_ms;
  std::uint64_t dropped_sample_count = 0;  // samples discarded since the previous event
  std::uint64_t error_count = 0;           // failed reads since the previous event
  // With opcodes: instructions counted for the first time, and the samples at each since the
  // previous event (by ID).
  std::vector<InstructionDefinition> new_instructions;
  std::vector<InstructionCount> instruction_counts;

  std::uint64_t sample_count() const;
};

// One batch with a's content before b's (definitions and samples stay in order; counts and
// durations add up; a run that continues across the two becomes one). If both define the same
// thread or process, b's definition is the one sent.
ProfilingBatch merge(ProfilingBatch a, ProfilingBatch b);
// Discards the samples but keeps the definitions, counting the discarded samples as dropped.
void drop_samples(ProfilingBatch& batch);
// The profilingData event body.
Json to_json(const ProfilingBatch& batch);

class BatchBuilder {
 public:
  // One builder per profiling run: frames (and stacks) are announced once per builder.
  explicit BatchBuilder(FrameTable table = FrameTable{}, Encoding encoding = Encoding::Frames);
  explicit BatchBuilder(Encoding encoding) : BatchBuilder(FrameTable{}, encoding) {}

  // Adds one thread's stack as the sampler gives it (innermost first).
  Status add(const model::ThreadStack& thread);
  // Announces a process the first time it is given, or that it ended (once).
  void add_process(const model::ProcessInfo& process);
  void process_exited(pid_t pid);
  // Adds every thread of a snapshot (the sampler has already filtered idle/GIL), and announces
  // its process (see add_process, process_exited).
  Status add(const model::Snapshot& snapshot);
  // Adds one thread's stack as indices into `frames`, a store of the caller's that interned them
  // (a run's whole-profile recording), innermost first: no frame is kept twice. `stack` is the
  // store's index of the whole stack, if it interns those too: then a stack seen before costs
  // one lookup, not one per frame.
  Status add(const model::ThreadInfo& thread, std::span<const std::uint32_t> innermost_first,
             std::span<const model::Frame> frames, std::optional<std::uint32_t> stack = {});
  void add_errors(std::uint64_t count) { pending_.error_count += count; }

  std::size_t pending_samples() const { return pending_.sample_count(); }
  // Nothing worth an event: no samples, definitions or errors since the last take().
  bool empty() const;
  // Everything added since the previous take(), covering duration_ms of wall time.
  ProfilingBatch take(double duration_ms);

  const FrameTable& frame_table() const { return table_; }

 private:
  void add_thread(const model::ThreadInfo& info);
  void add_sample(ThreadId thread, std::vector<FrameId>&& root_first,
                  std::optional<std::uint32_t> stack);
  void add_run(ThreadId thread, StackId stack);
  // The wire ID of a frame, its instruction left out; announced if new.
  Result<FrameId> wire_frame(const model::Frame& frame, bool classify);
  FrameTable table_;
  InstructionCounter instructions_;
  std::vector<InstructionSite> sites_;  // the sample being added's
  bool by_value_ = false;               // frames with instructions seen: intern by value
  StackIds stack_ids_;
  std::unordered_map<ThreadId, model::ThreadInfo> threads_;
  std::unordered_map<pid_t, model::ProcessInfo> processes_;  // announced; erased once exited
  ProfilingBatch pending_;
};

}  // namespace dapprof::protocol
