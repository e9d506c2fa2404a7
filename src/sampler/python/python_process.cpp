// PythonProcess: the sampling of one attached CPython process (attach.cpp finds and checks it).
#include "sampler/python/python_process.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "sampler/native/native_stacks.hpp"
#include "sampler/process/namespace_tids.hpp"
#include "sampler/process/pause.hpp"
#include "sampler/process/sample_reads.hpp"
#include "sampler/process/tasks.hpp"
#include "sampler/python/activity.hpp"
#include "sampler/python/asyncio_tasks.hpp"
#include "sampler/python/discovery.hpp"
#include "sampler/python/gc_state.hpp"
#include "sampler/python/handled_exception.hpp"
#include "sampler/python/interpreter_words.hpp"
#include "sampler/python/layout.hpp"
#include "sampler/python/locals.hpp"
#include "sampler/python/pthread_tids.hpp"
#include "sampler/python/quiet.hpp"
#include "sampler/python/sleepers.hpp"
#include "sampler/python/stack_walk.hpp"
#include "sampler/python/task_sampling.hpp"
#include "sampler/python/thread_list_memo.hpp"
#include "sampler/python/thread_names.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::sampler {
namespace {

using python::Address;
using Chunk = process::ProcessMemory::Chunk;

constexpr int kMaxInterpreters = 64;
// Consistent reads: how many unpaused reads may find a stack moving before a sample pauses,
// and how many may read past the fetch (the first sample, a stack that grew, a thread just
// started) before one does. A read costs the sampler microseconds and the program nothing; a
// pause holds the program stopped about 250 µs here. With 2 and 2, a program that starts
// threads all the time (tests/fixtures/busy.py) had 17% of its samples paused, mostly for
// reading past the fetch, as each new thread's frames are in memory the last plan did not
// cover; with 4 and 8, 0.4%.
constexpr int kUnpausedAttempts = 4;
constexpr int kRefetches = 8;
// How many callers of a thread's top frame have their instruction read again (see
// StackWalker::add_checks): a stack that changed deeper down yet left the top frames' addresses,
// code and lines as they were would have had all of them return and be called again identically
// within the microseconds of one sample.
constexpr std::size_t kCheckedCallers = 8;

class PythonProcessImpl final : public PythonProcess {
 public:
  PythonProcessImpl(pid_t pid, const AttachOptions& options, python::Interpreter interp,
                    python::Layout layout, std::unique_ptr<native::NativeStacks> native,
                    std::string warning)
      : pid_(pid),
        options_(options),
        memory_(pid),
        namespace_tids_(pid),
        interp_(std::move(interp)),
        layout_(layout),
        objects_(memory_, layout_, interp_.types),
        codes_(objects_),
        walker_(objects_, codes_, options.nonblocking, options.lines),
        names_(objects_),
        native_(std::move(native)),
        warning_(std::move(warning)) {
    memory_.use(&sample_reads_);
    if (namespace_tids_.nested()) walker_.map_tids(&namespace_tids_);
    if (options.async != model::AsyncMode::Off)
      tasks_sampling_.emplace(pid_, objects_, walker_, interp_, options.async);
    if (options.exceptions) exceptions_.emplace(objects_);
    if (options.opcodes)
      walker_.read_instructions(python::OpcodeSet::of(layout_.major, layout_.minor));
  }

  pid_t pid() const override { return pid_; }
  const std::string& python_version() const override { return interp_.version; }
  const std::string& warning() const override { return warning_; }
  bool exited() const override {
    if (!exited_) exited_ = process::thread_gone(pid_, pid_);
    return exited_;
  }
  ReadCounts read_counts() const override { return counts_; }
  Result<AsyncTasks> async_tasks() override {
    if (exited_) return exited_error();
    return python::read_asyncio_tasks(pid_, objects_, walker_, interp_, options_.nonblocking);
  }
  std::vector<std::pair<std::uint64_t, std::size_t>> read_plan() const override {
    return sample_reads_.plan();
  }

  Result<model::Snapshot> snapshot() override {
    // Whether the process is gone is asked of /proc only after a failed read, not every sample.
    if (exited_) return exited_error();
    Result<model::Snapshot> snap = Error{};
    try {
      snap = consistent_snapshot();
      // With native frames the tasks are read once the stacks are merged (see take()).
      if (snap && tasks_sampling_ && native_)
        if (auto s = tasks_sampling_->apply(*snap, sampled_, thread_infos_); !s) snap = s.error();
      // Last, over the stacks as merged and rearranged by task.
      if (snap) python::add_gc_frames(*snap, collecting_);
    } catch (const std::exception& e) {
      // Nothing read from a running target may bring the profiler down; a bug that throws
      // (bad_alloc from an absurd size, an iostream error in /proc) is one failed sample.
      // Seen: std::ios_failure from /proc readers when a thread exits mid-read. Transient, so
      // counted like a torn read.
      snap = Error{fmt::format("snapshot of process {} failed: {}", pid_, e.what()),
                   ErrorCode::TornRead};
    }
    if (!snap && (snap.code() == ErrorCode::ProcessExited || exited())) {
      exited_ = true;
      return exited_error();
    }
    return snap;
  }

 private:
  Error exited_error() const {
    return Error{fmt::format("process {} exited", pid_), ErrorCode::ProcessExited};
  }

  // See AttachOptions::nonblocking.
  Result<model::Snapshot> consistent_snapshot() {
    if (options_.nonblocking) return take(Read::Unpaused);
    if (!native_ && !options_.locals) {
      int moved = 0, refetched = 0;
      while (moved < kUnpausedAttempts && refetched < kRefetches) {
        auto snap = take(Read::Validated);
        if (snap || snap.code() != ErrorCode::TornRead) {
          if (snap) ++counts_.first_reads;
          return snap;
        }
        if (sample_reads_.complete()) {
          ++moved;
          ++counts_.retries;
        } else {
          ++refetched;  // the stack reached past what was fetched: now the plan covers it
        }
      }
    }
    ++counts_.paused;
    return take(Read::Paused);
  }

  enum class Read { Unpaused, Validated, Paused };

  Result<model::Snapshot> take(Read mode) {
    model::Snapshot snap;
    snap.pid = pid_;
    snap.time = std::chrono::steady_clock::now();
    sampled_.clear();
    collecting_.clear();
    // Waiting tasks are sampled whatever the threads do: a quiet process still has them.
    const bool all_tasks = options_.async == model::AsyncMode::All;
    if (mode != Read::Paused && !all_tasks && quiet_.still(snap.time, sleepers_, memory_))
      return snap;  // no thread to show
    // Declared before the pause, so that it is destroyed after the threads are resumed.
    struct StoppedTime {
      std::chrono::nanoseconds& total;
      std::optional<std::chrono::steady_clock::time_point> since;
      ~StoppedTime() {
        if (since) total += std::chrono::steady_clock::now() - *since;
      }
    } stopped{counts_.stopped, std::nullopt};
    std::optional<process::PausedProcess> pause;
    std::unordered_map<pid_t, bool> running;
    eval_groups_.clear();
    eval_entries_.clear();
    if (mode == Read::Paused) {
      // The kernel's view of each thread, before pausing (a paused thread shows as stopped).
      auto tids = tasks_.get(false);
      if (!tids) return tids.error();
      running = sleepers_.ask_all(*tids);
      std::vector<pid_t> active;
      if (options_.skip_idle)
        for (const auto& [tid, is_running] : running)
          if (is_running) active.push_back(tid);
      stopped.since = std::chrono::steady_clock::now();
      auto p = options_.skip_idle ? process::PausedProcess::pause_threads(pid_, active)
                                  : process::PausedProcess::pause(pid_);
      if (!p) return p.error();
      pause.emplace(std::move(*p));
    }
    // Every read from here to the end of the sample is served from the bytes fetched now where
    // they cover it.
    sample_reads_.begin(memory_);
    struct EndSample {
      process::SampleReads& reads;
      ~EndSample() { reads.end(); }
    } end_sample{sample_reads_};

    sleepers_.begin(std::chrono::steady_clock::now());
    auto threads = read_threads(mode != Read::Paused && options_.skip_idle);
    if (!threads) return threads.error();
    if (auto s = find_tids(*threads, mode != Read::Paused && options_.skip_idle); !s)
      return s.error();
    if (mode != Read::Paused) {
      running = kernel_states(*threads);
      note_quiet(*threads);
    }
    if (all_tasks) {
      thread_infos_.clear();
      for (const auto& t : *threads)
        thread_infos_[t.tid] = {pid_, t.raw.thread_id, t.tid, names_.name(t.raw.thread_id)};
    }
    // Where each walked thread's top frame pointer and that frame's code word were read, and
    // what they were.
    std::vector<Chunk>& tops = tops_;
    std::vector<Address>& expected = expected_tops_;
    tops.clear();
    expected.clear();
    for (const auto& t : *threads) {
      auto kept = read_thread(t, running, snap);
      if (!kept) return kept.error();
      if (*kept && !snap.threads.back().frames.empty())
        walker_.add_checks(tops, expected, kCheckedCallers);
    }
    // The tasks are read within the sample, so that their reads join its plan: the next
    // sample fetches them with the stacks, in its one system call, and they are of its instant.
    if (tasks_sampling_ && !native_)
      if (auto s = tasks_sampling_->apply(snap, sampled_, thread_infos_); !s) return s.error();
    // Bytes read after the fetch are of a later instant than those it served: a stack that
    // reached past the fetch may mix the two, whatever its top frame says.
    if (mode == Read::Validated && !sample_reads_.complete())
      return Error{"a stack was read past the sample's fetch", ErrorCode::TornRead};
    if (mode == Read::Validated && !tops.empty()) {
      // Each stack was read from bytes fetched together. Its top frame still holding the code
      // it held, and its callers still at the instructions they were at, the stack read is one
      // that existed: a caller moves on only once everything above it has returned, and a call
      // returned and another made from the same caller into other code changes the code word
      // at the same address. Whether the thread's current frame is still that top frame does
      // not matter: a callee pushed above it (under a debugger, its trace function on every
      // line) leaves the frames beneath intact, and a return from it moves its caller on.
      std::vector<Address>& now = tops_now_;
      now.assign(tops.size(), 0);
      for (std::size_t i = 0; i < tops.size(); ++i) tops[i].out = &now[i];
      if (auto s = memory_.read_now(tops); !s) return python::as_torn(s.error());
      if (now != expected) return Error{"a stack moved while it was read", ErrorCode::TornRead};
    }
    if (native_ && pause) add_native_frames(pause, snap);
    return snap;
  }

  struct FoundThread {
    Address interp = 0;
    python::RawThread raw;
    Address gil_holder = 0;   // of its interpreter; 0 if the GIL is not held
    std::uint64_t tid = 0;    // Linux TID; 0 if unknown
    bool collecting = false;  // it runs a garbage collection (see gc_state.hpp)
  };

  // After a full read: whether the process is quiet (see Quiet).
  void note_quiet(const std::vector<FoundThread>& threads) {
    std::vector<python::Quiet::Thread>& seen = quiet_seen_;
    seen.clear();
    for (const auto& t : threads)
      seen.push_back({static_cast<pid_t>(t.tid), t.raw.tstate, t.gil_holder});
    quiet_.seen(options_.skip_idle && !native_, seen, sleepers_);
  }

  // The kernel's view of each thread, unpaused, asked only about threads not still asleep.
  std::unordered_map<pid_t, bool> kernel_states(const std::vector<FoundThread>& threads) {
    std::vector<python::Sleepers::Thread> seen;
    seen.reserve(threads.size());
    for (const auto& t : threads) {
      seen.push_back({static_cast<pid_t>(t.tid), t.raw.tstate, t.gil_holder,
                      t.raw.top_read ? std::optional(t.raw.top_frame) : std::nullopt});
    }
    return sleepers_.states(seen);
  }

  // Every interpreter's thread states. Batched: the interpreter list head and (3.8-3.11) the GIL
  // holder, then per interpreter its thread list head, successor and (3.12+) GIL. With
  // `skip_sleepers`, the top frame of a thread still asleep (see Sleepers) is left unread.
  Result<std::vector<FoundThread>> read_threads(bool skip_sleepers) {
    Address head = 0;
    Address runtime_holder = 0;
    std::int32_t runtime_gc = 0;  // 3.7-3.8: the one collector's flag
    std::vector<Chunk> chunks{{interp_.runtime + layout_.runtime_interpreters_head, &head, 8}};
    if (layout_.runtime_tstate_current != python::kAbsent) {
      chunks.push_back({interp_.runtime + layout_.runtime_tstate_current, &runtime_holder, 8});
    }
    const bool runtime_gc_flag = options_.gc && layout_.runtime_gc_collecting != python::kAbsent;
    if (runtime_gc_flag)
      chunks.push_back({interp_.runtime + layout_.runtime_gc_collecting, &runtime_gc, 4});
    if (auto s = memory_.read_many(chunks); !s) return python::as_torn(s.error());
    // Where each GIL's "held" word is, for the quiet samples that may follow (see Quiet).
    quiet_.begin_read();
    if (layout_.runtime_tstate_current != python::kAbsent)
      quiet_.add_gil_word(interp_.runtime + layout_.runtime_tstate_current, 8);
    std::vector<FoundThread> found;
    std::vector<Address>& seen = interps_seen_;
    seen.clear();
    // 3.8-3.10: a sleeper is known by a TID found through its pthread, not in its thread state.
    const bool memo = skip_sleepers && layout_.tstate_native_thread_id != python::kAbsent;
    for (Address interp = head; interp != 0;) {
      if (seen.size() >= kMaxInterpreters ||
          std::find(seen.begin(), seen.end(), interp) != seen.end()) {
        return Error{"interpreter list cycle", ErrorCode::TornRead};
      }
      seen.push_back(interp);
      python::InterpreterWords words;
      const auto gc_flag = options_.gc && !runtime_gc_flag
                               ? python::gc_flag_address(layout_, interp_.runtime, interp)
                               : std::nullopt;
      if (auto s = python::read_interpreter_words(memory_, layout_, interp, words, gc_flag); !s)
        return python::as_torn(s.error());
      if (runtime_gc_flag) words.gc_collecting = runtime_gc;
      if (layout_.runtime_tstate_current != python::kAbsent) words.gil_holder = runtime_holder;
      if (words.gil != 0) quiet_.add_gil_word(words.gil + layout_.gil_locked, 4);
      const auto asleep = [&](const python::RawThread& t) {
        return sleepers_.asleep(static_cast<pid_t>(t.native_thread_id), t.tstate, words.gil_holder);
      };
      auto threads =
          memo ? thread_lists_.threads(walker_, interp, words.threads_head, sleepers_.now(), asleep)
               : walker_.threads(interp, words.threads_head);
      if (!threads) return threads.error();
      std::vector<std::uint64_t> ids;
      for (const auto& t : *threads) {
        found.push_back({interp, t, words.gil_holder, t.native_thread_id,
                         python::runs_collection(words.gc_collecting, words.gil_holder, t.tstate)});
        ids.push_back(t.thread_id);
      }
      names_.update(interp, ids);
      interp = words.next;
    }
    thread_lists_.retain(memo ? seen : std::vector<Address>{});
    return found;
  }

  // 3.8-3.10 record no TID in the thread state: find it from the pthread, among the TIDs
  // listed (again, if one is missing: a thread started since the last listing).
  // A thread still asleep (see Sleepers) keeps the TID found for it last time: reading it
  // again would fetch a word of that thread's own stack mapping at every sample.
  Status find_tids(std::vector<FoundThread>& threads, bool skip_sleepers) {
    if (layout_.tstate_native_thread_id != python::kAbsent) return Ok{};
    std::vector<std::uint64_t> ids;
    std::vector<FoundThread*> unknown;
    std::unordered_map<std::uint64_t, std::uint64_t> found;
    for (auto& t : threads) {
      const auto known = skip_sleepers ? sleepers_.tid_of(t.raw.thread_id) : std::nullopt;
      if (known && sleepers_.asleep(static_cast<pid_t>(*known), t.raw.tstate, t.gil_holder,
                                    t.raw.top_frame)) {
        t.tid = *known;
        found.emplace(t.raw.thread_id, t.tid);
        continue;
      }
      ids.push_back(t.raw.thread_id);
      unknown.push_back(&t);
    }
    for (bool stale : {false, true}) {
      if (ids.empty()) break;
      auto known = tasks_.get(stale);
      if (!known) return known.error();
      const auto tids = tid_finder_.tids(memory_, ids, *known, &namespace_tids_);
      for (std::size_t i = 0; i < unknown.size(); ++i) unknown[i]->tid = tids[i];
      if (std::find(tids.begin(), tids.end(), 0) == tids.end()) break;
      if (tasks_.fresh()) break;
    }
    for (const auto* t : unknown)
      if (t->tid) found.emplace(t->raw.thread_id, t->tid);
    sleepers_.found_tids(std::move(found));
    return Ok{};
  }

  // Native stacks are unwound while the threads are stopped; they are named and merged once the
  // threads run again, which keeps the pause short.
  void add_native_frames(std::optional<process::PausedProcess>& pause, model::Snapshot& snap) {
    const auto& paused = pause->threads();
    std::vector<pid_t> tids;
    for (const auto& t : snap.threads) {
      const auto tid = static_cast<pid_t>(t.info.os_thread_id);
      // A thread not stopped by this pause (unknown TID) cannot be unwound.
      if (tid > 0 && std::find(paused.begin(), paused.end(), tid) != paused.end())
        tids.push_back(tid);
    }
    native_->unwind(tids);
    pause.reset();
    for (std::size_t i = 0; i < snap.threads.size(); ++i) {
      auto& t = snap.threads[i];
      t.frames = native_->merge(static_cast<pid_t>(t.info.os_thread_id), std::move(t.frames),
                                eval_groups_[i], eval_entries_[i]);
    }
  }

  // Adds the thread's stack to the snapshot; false if it was left out: an idle thread when idle
  // threads are skipped, which the loop would drop anyway (so a program with many sleeping
  // threads costs little more per sample than one with a single thread).
  Result<bool> read_thread(const FoundThread& found, const std::unordered_map<pid_t, bool>& running,
                           model::Snapshot& snap) {
    const auto& t = found.raw;
    const auto it = running.find(static_cast<pid_t>(found.tid));
    const bool kernel_active = it != running.end() && it->second;
    if (options_.skip_idle && !kernel_active) return false;
    model::ThreadStack stack;
    stack.info.pid = pid_;
    stack.info.thread_id = t.thread_id;
    stack.info.os_thread_id = found.tid;
    stack.info.name = names_.name(t.thread_id);
    stack.owns_gil = found.gil_holder != 0 && found.gil_holder == t.tstate;
    std::vector<std::uint32_t> groups;
    std::vector<Address> entries;
    std::vector<python::StackWalker::FrameAt> where;
    const bool located = options_.locals || tasks_sampling_;
    if (t.top_frame) {
      auto frames = walker_.walk(t.top_frame, native_ ? &groups : nullptr,
                                 native_ ? &entries : nullptr, located ? &where : nullptr);
      if (!frames) return frames.error();
      stack.frames = std::move(*frames);
    }
    if (tasks_sampling_) {
      python::SampledThread& at = sampled_.emplace_back();
      at.tstate = t.tstate;
      for (const auto& w : where) at.frames.push_back(w.frame);
    }
    if (options_.locals) {
      const python::LocalsReader reader(objects_);
      for (const auto& w : where) {
        auto vars = reader.read(w.frame, w.code);
        if (!vars) return vars.error();
        stack.locals.push_back(std::move(*vars));
      }
    }
    if (native_) {
      eval_groups_.push_back(std::move(groups));
      eval_entries_.push_back(std::move(entries));
    }
    stack.on_cpu = kernel_active;
    stack.active = kernel_active && !python::in_waiting_function(stack.frames);
    if (exceptions_) {
      auto handled = exceptions_->of(t.tstate);
      if (!handled) return handled.error();
      stack.exception = std::move(*handled);
    }
    if (found.collecting) collecting_.push_back(t.thread_id);
    snap.threads.push_back(std::move(stack));
    return true;
  }

  pid_t pid_;
  AttachOptions options_;
  process::ProcessMemory memory_;
  // A container's TIDs as the host knows them (the walker maps every thread's through it).
  process::NamespaceTids namespace_tids_;
  process::SampleReads sample_reads_;
  python::Interpreter interp_;
  python::Layout layout_;
  python::Objects objects_;
  python::CodeCache codes_;
  python::StackWalker walker_;
  python::ThreadNames names_;
  python::PthreadTids tid_finder_;
  mutable bool exited_ = false;
  python::Sleepers sleepers_{pid_};
  process::TaskList tasks_{pid_};
  std::unique_ptr<native::NativeStacks> native_;         // null unless options.native
  std::vector<std::vector<std::uint32_t>> eval_groups_;  // per thread of the snapshot in progress
  std::vector<std::vector<Address>> eval_entries_;       // per thread, as eval_groups_
  ReadCounts counts_;
  std::string warning_;
  // The top-frame checks of the sample in progress (see take()), kept for the next sample.
  std::vector<Chunk> tops_;
  std::vector<Address> expected_tops_, tops_now_;
  python::Quiet quiet_;
  python::ThreadListMemo thread_lists_;
  std::vector<Address> interps_seen_;                    // scratch of read_threads()
  std::vector<python::Quiet::Thread> quiet_seen_;        // scratch of note_quiet()
  std::optional<python::TaskSampling> tasks_sampling_;   // unless options.async is Off
  std::optional<python::HandledExceptions> exceptions_;  // with options.exceptions
  // Of the sample in progress, for tasks_sampling_: its threads parallel to the snapshot's, and
  // (async "all") every thread of the process by TID.
  std::vector<python::SampledThread> sampled_;
  // Of the sample in progress: the Python thread ids of the threads running a collection.
  std::vector<std::uint64_t> collecting_;
  std::unordered_map<std::uint64_t, model::ThreadInfo> thread_infos_;
};

}  // namespace

std::unique_ptr<PythonProcess> python::open_process(pid_t pid, const AttachOptions& options,
                                                    Interpreter interp, Layout layout,
                                                    std::unique_ptr<native::NativeStacks> native,
                                                    std::string warning) {
  return std::make_unique<PythonProcessImpl>(pid, options, std::move(interp), layout,
                                             std::move(native), std::move(warning));
}

}  // namespace dapprof::sampler
