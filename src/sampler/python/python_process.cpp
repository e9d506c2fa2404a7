// PythonProcess: discovery -> layout -> stack walk, for one attached CPython process.
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
#include "sampler/process/pause.hpp"
#include "sampler/process/sample_reads.hpp"
#include "sampler/process/tasks.hpp"
#include "sampler/process/thread_states.hpp"
#include "sampler/python/activity.hpp"
#include "sampler/python/discovery.hpp"
#include "sampler/python/layout.hpp"
#include "sampler/python/pthread_tids.hpp"
#include "sampler/python/stack_walk.hpp"
#include "sampler/python/thread_names.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::sampler {
namespace {

using python::Address;
using Chunk = process::ProcessMemory::Chunk;

constexpr int kMaxInterpreters = 64;
// Consistent reads: how many unpaused reads may find a stack moving before a sample pauses.
constexpr int kUnpausedAttempts = 2;
// How old the list of the process's TIDs may get before it is listed again, and how soon a
// missing TID may have it listed again.
constexpr auto kTaskListAge = std::chrono::milliseconds(100);
constexpr auto kTaskListMinAge = std::chrono::milliseconds(2);

class PythonProcessImpl final : public PythonProcess {
 public:
  PythonProcessImpl(pid_t pid, const AttachOptions& options, python::Interpreter interp,
                    python::Layout layout, std::unique_ptr<native::NativeStacks> native,
                    std::string warning)
      : pid_(pid),
        options_(options),
        memory_(pid),
        interp_(std::move(interp)),
        layout_(layout),
        objects_(memory_, layout_, interp_.types),
        codes_(objects_),
        walker_(objects_, codes_, options.nonblocking),
        names_(objects_),
        native_(std::move(native)),
        warning_(std::move(warning)) {
    memory_.use(&sample_reads_);
  }

  pid_t pid() const override { return pid_; }
  const std::string& python_version() const override { return interp_.version; }
  const std::string& warning() const override { return warning_; }
  bool exited() const override {
    if (!exited_) exited_ = process::thread_gone(pid_, pid_);
    return exited_;
  }
  ReadCounts read_counts() const override { return counts_; }
  std::vector<std::pair<std::uint64_t, std::size_t>> read_plan() const override {
    return sample_reads_.plan();
  }

  Result<model::Snapshot> snapshot() override {
    // Whether the process is gone is asked of /proc only after a failed read, not every sample.
    if (exited_) return exited_error();
    Result<model::Snapshot> snap = Error{};
    try {
      snap = consistent_snapshot();
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

  // The process's TIDs from /proc/PID/task, listed again only when older than kTaskListAge or
  // when `stale` (a thread was not found in it): listing costs five system calls.
  Result<std::vector<pid_t>> task_list(bool stale) {
    const auto now = std::chrono::steady_clock::now();
    if (stale || !tasks_listed_ || now - *tasks_listed_ > kTaskListAge) {
      auto tids = process::list_threads(pid_);
      if (!tids) return tids.error();
      tasks_ = std::move(*tids);
      tasks_listed_ = now;
    }
    return tasks_;
  }

  // See AttachOptions::nonblocking.
  Result<model::Snapshot> consistent_snapshot() {
    if (options_.nonblocking) return take(Read::Unpaused);
    if (!native_) {
      for (int attempt = 0; attempt < kUnpausedAttempts; ++attempt) {
        auto snap = take(Read::Validated);
        if (snap || snap.code() != ErrorCode::TornRead) {
          if (snap) ++counts_.first_reads;
          return snap;
        }
        ++counts_.retries;
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
    std::optional<process::PausedProcess> pause;
    std::unordered_map<pid_t, bool> running;
    eval_groups_.clear();
    eval_entries_.clear();
    if (mode == Read::Paused) {
      // The kernel's view of each thread, before pausing (a paused thread shows as stopped).
      auto tids = task_list(false);
      if (!tids) return tids.error();
      running = thread_states_.active(*tids);
      std::vector<pid_t> active;
      if (options_.skip_idle)
        for (const auto& [tid, is_running] : running)
          if (is_running) active.push_back(tid);
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

    auto threads = read_threads();
    if (!threads) return threads.error();
    if (auto s = find_tids(*threads); !s) return s.error();
    if (mode != Read::Paused) {
      std::vector<pid_t> tids;
      for (const auto& t : *threads) tids.push_back(static_cast<pid_t>(t.tid));
      running = thread_states_.active(tids);
    }
    std::vector<Chunk> tops;
    std::vector<Address> now;
    for (const auto& t : *threads) {
      if (auto s = read_thread(t, running, snap); !s) return s.error();
      if (!snap.threads.back().frames.empty() && t.raw.top_word) {
        tops.push_back({t.raw.top_word, nullptr, sizeof(Address)});
      }
    }
    if (mode == Read::Validated && !tops.empty()) {
      // Each stack was read from bytes fetched together; a thread whose top frame is still the
      // one it was had its stack unchanged beneath that frame meanwhile (a callee pushed and
      // popped above it leaves it intact), so the stack read is one that existed.
      now.resize(tops.size());
      for (std::size_t i = 0; i < tops.size(); ++i) tops[i].out = &now[i];
      if (auto s = memory_.read_now(tops); !s) return python::as_torn(s.error());
      std::size_t i = 0;
      for (const auto& t : *threads) {
        if (!t.raw.top_word || i >= tops.size() || tops[i].addr != t.raw.top_word) continue;
        if (now[i++] != t.raw.top_frame)
          return Error{"a stack moved while it was read", ErrorCode::TornRead};
      }
    }
    if (native_ && pause) add_native_frames(pause, snap);
    return snap;
  }

  struct FoundThread {
    Address interp = 0;
    python::RawThread raw;
    Address gil_holder = 0;  // of its interpreter; 0 if the GIL is not held
    std::uint64_t tid = 0;   // Linux TID; 0 if unknown
  };

  // Every interpreter's thread states. Batched: the interpreter list head and (3.8-3.11) the GIL
  // holder, then per interpreter its thread list head, successor and (3.12+) GIL.
  Result<std::vector<FoundThread>> read_threads() {
    Address head = 0;
    Address runtime_holder = 0;
    std::vector<Chunk> chunks{{interp_.runtime + layout_.runtime_interpreters_head, &head, 8}};
    if (layout_.runtime_tstate_current != python::kAbsent) {
      chunks.push_back({interp_.runtime + layout_.runtime_tstate_current, &runtime_holder, 8});
    }
    if (auto s = memory_.read_many(chunks); !s) return python::as_torn(s.error());
    std::vector<FoundThread> found;
    std::unordered_set<Address> seen;
    for (Address interp = head; interp != 0;) {
      if (seen.size() >= kMaxInterpreters || !seen.insert(interp).second) {
        return Error{"interpreter list cycle", ErrorCode::TornRead};
      }
      InterpreterWords words;
      if (auto s = read_words(interp, words); !s) return python::as_torn(s.error());
      if (layout_.runtime_tstate_current != python::kAbsent) words.gil_holder = runtime_holder;
      auto threads = walker_.threads(interp, words.threads_head);
      if (!threads) return threads.error();
      std::vector<std::uint64_t> ids;
      for (const auto& t : *threads) {
        found.push_back({interp, t, words.gil_holder, t.native_thread_id});
        ids.push_back(t.thread_id);
      }
      names_.update(interp, ids);
      interp = words.next;
    }
    return found;
  }

  // 3.8-3.10 record no TID in the thread state: find it from the pthread, among the TIDs
  // listed (again, if one is missing: a thread started since the last listing).
  Status find_tids(std::vector<FoundThread>& threads) {
    if (layout_.tstate_native_thread_id != python::kAbsent) return Ok{};
    std::vector<std::uint64_t> ids;
    for (const auto& t : threads) ids.push_back(t.raw.thread_id);
    for (bool stale : {false, true}) {
      auto known = task_list(stale);
      if (!known) return known.error();
      const auto tids = tid_finder_.tids(memory_, ids, *known);
      for (std::size_t i = 0; i < threads.size(); ++i) threads[i].tid = tids[i];
      if (std::find(tids.begin(), tids.end(), 0) == tids.end()) break;
      if (std::chrono::steady_clock::now() - *tasks_listed_ < kTaskListMinAge) break;
    }
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

  struct InterpreterWords {
    Address threads_head = 0;
    Address next = 0;
    Address gil = 0;
    Address gil_holder = 0;  // 0 if the GIL is not held
  };

  Status read_words(Address interp, InterpreterWords& w) const {
    std::vector<Chunk> chunks{{interp + layout_.interp_threads_head, &w.threads_head, 8},
                              {interp + layout_.interp_next, &w.next, 8}};
    if (layout_.interp_ceval_gil != python::kAbsent) {
      chunks.push_back({interp + layout_.interp_ceval_gil, &w.gil, 8});
    }
    if (auto s = memory_.read_many(chunks); !s) return s;
    if (w.gil == 0) return Ok{};
    // 3.12+: the GIL's `locked` flag and `last_holder`, in one read of that part of the struct.
    const std::uint64_t lo = std::min(layout_.gil_locked, layout_.gil_last_holder);
    const std::uint64_t hi = std::max(layout_.gil_locked, layout_.gil_last_holder) + 8;
    std::array<std::byte, 64> buf{};
    if (hi - lo > buf.size()) return Error{"GIL layout out of range", ErrorCode::TornRead};
    if (auto s = memory_.read(w.gil + lo, buf.data(), hi - lo); !s) return s;
    int locked = 0;
    std::memcpy(&locked, buf.data() + (layout_.gil_locked - lo), sizeof locked);
    if (locked) std::memcpy(&w.gil_holder, buf.data() + (layout_.gil_last_holder - lo), 8);
    return Ok{};
  }

  Status read_thread(const FoundThread& found, const std::unordered_map<pid_t, bool>& running,
                     model::Snapshot& snap) {
    const auto& t = found.raw;
    model::ThreadStack stack;
    stack.info.pid = pid_;
    stack.info.thread_id = t.thread_id;
    stack.info.os_thread_id = found.tid;
    stack.info.name = names_.name(t.thread_id);
    stack.owns_gil = found.gil_holder != 0 && found.gil_holder == t.tstate;
    const auto it = running.find(static_cast<pid_t>(found.tid));
    const bool kernel_active = it != running.end() && it->second;
    std::vector<std::uint32_t> groups;
    std::vector<Address> entries;
    if (t.top_frame && (kernel_active || !options_.skip_idle)) {
      auto frames =
          walker_.walk(t.top_frame, native_ ? &groups : nullptr, native_ ? &entries : nullptr);
      if (!frames) return frames.error();
      stack.frames = std::move(*frames);
    }
    if (native_) {
      eval_groups_.push_back(std::move(groups));
      eval_entries_.push_back(std::move(entries));
    }
    stack.active = kernel_active && !python::in_waiting_function(stack.frames);
    snap.threads.push_back(std::move(stack));
    return Ok{};
  }

  pid_t pid_;
  AttachOptions options_;
  process::ProcessMemory memory_;
  process::SampleReads sample_reads_;
  python::Interpreter interp_;
  python::Layout layout_;
  python::Objects objects_;
  python::CodeCache codes_;
  python::StackWalker walker_;
  python::ThreadNames names_;
  python::PthreadTids tid_finder_;
  mutable bool exited_ = false;
  process::ThreadStates thread_states_{pid_};
  std::vector<pid_t> tasks_;  // see task_list()
  std::optional<std::chrono::steady_clock::time_point> tasks_listed_;
  std::unique_ptr<native::NativeStacks> native_;         // null unless options.native
  std::vector<std::vector<std::uint32_t>> eval_groups_;  // per thread of the snapshot in progress
  std::vector<std::vector<Address>> eval_entries_;       // per thread, as eval_groups_
  ReadCounts counts_;
  std::string warning_;
};

// The files whose code is the interpreter's: the one holding _PyRuntime and the executable.
std::vector<std::string> interpreter_files(pid_t pid, const python::Interpreter& interp) {
  std::vector<std::string> files{interp.binary};
  std::array<char, 4096> exe{};
  const auto link = fmt::format("/proc/{}/exe", pid);
  const ssize_t n = ::readlink(link.c_str(), exe.data(), exe.size() - 1);
  if (n > 0) files.emplace_back(exe.data(), static_cast<std::size_t>(n));
  return files;
}

// Up to 3.12: the generated table of the version; 3.13+: the target's own _Py_DebugOffsets.
Result<python::Layout> read_layout(pid_t pid, const process::ProcessMemory& memory,
                                   const python::Interpreter& interp) {
  Result<python::Layout> layout = Error{};
  const bool published = python::has_debug_offsets(interp.major, interp.minor);
  if (published) {
    std::vector<std::byte> debug(python::kDebugOffsetsReadSize);
    if (auto s = memory.read(interp.runtime, debug.data(), debug.size()); !s) return s.error();
    layout = python::layout_from_debug_offsets(interp.major, interp.minor, debug);
  } else {
    layout = python::layout_for(interp.major, interp.minor);
  }
  if (layout || layout.code() != ErrorCode::UnsupportedVersion) return layout;
  // The debug offsets' reader says why; without them, the supported versions say it.
  return python::unreadable_version(pid, interp.version, published ? layout.message() : "");
}

// What to say once about a version dapprof samples without having been tested on it.
std::string untested_warning(const python::Interpreter& interp, const python::Layout& layout) {
  if (layout.borrowed_minor == 0) return "";
  return fmt::format(
      "Python {} is newer than the versions dapprof was tested with (CPython {}); "
      "its _Py_DebugOffsets have the shape of 3.{}'s, so it is sampled with that "
      "layout, untested",
      interp.version, python::supported_range(), layout.borrowed_minor);
}

// One attempt: discovery, layout, and a check that the runtime holds a live interpreter with at
// least one thread (not yet true just after exec).
// `final_attempt`: accept a version without its micro number (before 3.11 it is read from
// sys.version's buffer, which start-up fills a little after _PyRuntime is usable).
Result<std::unique_ptr<PythonProcess>> try_attach(pid_t pid, const AttachOptions& options,
                                                  bool final_attempt) {
  process::ProcessMemory memory(pid);
  auto interp = python::discover_interpreter(pid, memory);
  if (!interp) return interp.error();
  if (!final_attempt && std::count(interp->version.begin(), interp->version.end(), '.') < 2) {
    return Error{fmt::format("process {}: Python {} is still starting", pid, interp->version),
                 ErrorCode::NotPython};
  }
  auto layout = read_layout(pid, memory, *interp);
  if (!layout) return layout.error();
  if (auto missing = python::missing_fields(*layout); !missing.empty()) {
    return Error{
        fmt::format("internal error: the Python {} layout lacks {}", interp->version, missing)};
  }
  auto head = memory.read_pointer(interp->runtime + layout->runtime_interpreters_head);
  if (!head) return head.error();
  if (*head == 0) {
    return Error{fmt::format("process {}: the Python interpreter is not initialised yet", pid),
                 ErrorCode::NotPython};
  }
  auto threads = memory.read_pointer(*head + layout->interp_threads_head);
  if (!threads) return threads.error();
  if (*threads == 0) {
    return Error{fmt::format("process {}: the Python interpreter has no thread yet", pid),
                 ErrorCode::NotPython};
  }
  auto tstate_interp = memory.read_pointer(*threads + layout->tstate_interp);
  if (!tstate_interp) return tstate_interp.error();
  if (*tstate_interp != *head) {
    return Error{fmt::format("process {}: _PyRuntime does not hold a valid interpreter", pid),
                 ErrorCode::NotPython};
  }
  std::unique_ptr<native::NativeStacks> native;
  if (options.native) {
    auto stacks =
        native::NativeStacks::create(pid, interpreter_files(pid, *interp), options.native_all);
    if (!stacks) return stacks.error();
    native = std::move(*stacks);
  }
  spdlog::debug("attached to {} (Python {}, {}, _PyRuntime at {:#x})", pid, interp->version,
                interp->binary, interp->runtime);
  auto warning = untested_warning(*interp, *layout);
  return std::unique_ptr<PythonProcess>(std::make_unique<PythonProcessImpl>(
      pid, options, std::move(*interp), *layout, std::move(native), std::move(warning)));
}

}  // namespace

Result<std::unique_ptr<PythonProcess>> PythonProcess::attach(pid_t pid,
                                                             const AttachOptions& options) {
  if (options.native && options.nonblocking) {
    // Unwinding reads registers and stacks that change while a thread runs.
    return Error{
        "native frames need the threads paused while they are read: sample in blocking "
        "mode (drop nonblocking) to include native frames",
        ErrorCode::InvalidArgument};
  }
  const auto deadline = std::chrono::steady_clock::now() + options.wait_for_interpreter;
  while (true) {
    Result<std::unique_ptr<PythonProcess>> attached = Error{};
    try {
      const bool final_attempt =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(10) >= deadline;
      attached = try_attach(pid, options, final_attempt);
    } catch (const std::exception& e) {  // /proc readers can throw when the process exits
      attached = Error{fmt::format("cannot attach to process {}: {}", pid, e.what())};
    }
    if (attached) return attached;
    // Retry what a starting process can still grow out of (no libpython mapped yet, runtime not
    // initialised, a pyenv shim that has not exec'd python yet); give up on the rest.
    const auto code = attached.code();
    const bool transient = code == ErrorCode::NotPython || code == ErrorCode::Generic;
    if (!transient || std::chrono::steady_clock::now() >= deadline) return attached;
    if (process::thread_gone(pid, pid)) {
      return Error{fmt::format("process {} exited before its Python interpreter started", pid),
                   ErrorCode::ProcessExited};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace dapprof::sampler
