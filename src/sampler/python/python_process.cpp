// PythonProcess: discovery -> layout -> stack walk, for one attached CPython process.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "sampler/process/pause.hpp"
#include "sampler/process/tasks.hpp"
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

constexpr int kMaxInterpreters = 64;

// process::thread_state/thread_active read /proc with iostreams, which throw when the thread
// exits between open and read (ESRCH): a thread gone is a thread not running.
bool thread_running(pid_t pid, pid_t tid) {
  try {
    return process::thread_active(pid, tid);
  } catch (const std::exception&) {
    return false;
  }
}

bool gone(pid_t pid) {
  try {
    auto state = process::thread_state(pid, pid);
    return !state || *state == 'Z' || *state == 'X';
  } catch (const std::exception&) {
    return true;
  }
}

class PythonProcessImpl final : public PythonProcess {
 public:
  PythonProcessImpl(pid_t pid, const AttachOptions& options, python::Interpreter interp,
                    python::Layout layout)
      : pid_(pid),
        options_(options),
        memory_(pid),
        interp_(std::move(interp)),
        layout_(layout),
        objects_(memory_, layout_, interp_.types),
        codes_(objects_),
        walker_(objects_, codes_, options.nonblocking),
        names_(objects_) {}

  pid_t pid() const override { return pid_; }
  const std::string& python_version() const override { return interp_.version; }
  bool exited() const override {
    if (!exited_) exited_ = gone(pid_);
    return exited_;
  }

  Result<Snapshot> snapshot() override {
    if (exited()) return exited_error();
    auto snap = take();
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

  Result<Snapshot> take() {
    Snapshot snap;
    snap.pid = pid_;
    snap.time = std::chrono::steady_clock::now();
    // The kernel's view of each thread, before pausing (a paused thread shows as stopped).
    auto tids = process::list_threads(pid_);
    if (!tids) return tids.error();
    std::unordered_map<pid_t, bool> running;
    for (pid_t tid : *tids) running[tid] = thread_running(pid_, tid);

    std::optional<process::PausedProcess> pause;
    if (!options_.nonblocking) {
      auto p = process::PausedProcess::pause(pid_);
      if (!p) return p.error();
      pause.emplace(std::move(*p));
    }

    auto head = memory_.read_pointer(interp_.runtime + layout_.runtime_interpreters_head);
    if (!head) return python::as_torn(head.error());
    std::unordered_set<Address> seen;
    for (Address interp = *head; interp != 0;) {
      if (seen.size() >= kMaxInterpreters || !seen.insert(interp).second) {
        return Error{"interpreter list cycle", ErrorCode::TornRead};
      }
      if (auto s = read_interpreter(interp, running, snap); !s) return s.error();
      auto next = memory_.read_pointer(interp + layout_.interp_next);
      if (!next) return python::as_torn(next.error());
      interp = *next;
    }
    return snap;
  }

  Result<Address> gil_holder(Address interp) const {
    if (layout_.runtime_tstate_current != python::kAbsent) {
      return memory_.read_pointer(interp_.runtime + layout_.runtime_tstate_current);
    }
    auto gil = memory_.read_pointer(interp + layout_.interp_ceval_gil);
    if (!gil) return gil.error();
    if (*gil == 0) return Address{0};
    auto locked = memory_.read<int>(*gil + layout_.gil_locked);
    if (!locked) return locked.error();
    if (!*locked) return Address{0};
    return memory_.read_pointer(*gil + layout_.gil_last_holder);
  }

  Status read_interpreter(Address interp, const std::unordered_map<pid_t, bool>& running,
                          Snapshot& snap) {
    auto threads = walker_.threads(interp);
    if (!threads) return threads.error();
    auto holder = gil_holder(interp);
    if (!holder) return python::as_torn(holder.error());

    std::vector<std::uint64_t> ids;
    for (const auto& t : *threads) ids.push_back(t.thread_id);
    std::vector<std::uint64_t> tids;
    if (layout_.tstate_native_thread_id != python::kAbsent) {
      for (const auto& t : *threads) tids.push_back(t.native_thread_id);
    } else {
      std::vector<pid_t> known;
      for (const auto& [tid, active] : running) known.push_back(tid);
      tids = tid_finder_.tids(memory_, ids, known);
    }
    names_.update(interp, ids);

    for (std::size_t i = 0; i < threads->size(); ++i) {
      const auto& t = (*threads)[i];
      ThreadStack stack;
      stack.thread_id = t.thread_id;
      stack.os_thread_id = tids[i];
      stack.name = names_.name(t.thread_id);
      stack.owns_gil = *holder != 0 && *holder == t.tstate;
      if (t.top_frame) {
        auto frames = walker_.walk(t.top_frame);
        if (!frames) return frames.error();
        stack.frames = std::move(*frames);
      }
      const auto it = running.find(static_cast<pid_t>(stack.os_thread_id));
      const bool kernel_active = it != running.end() && it->second;
      stack.active = kernel_active && !python::in_waiting_function(stack.frames);
      snap.threads.push_back(std::move(stack));
    }
    return Ok{};
  }

  pid_t pid_;
  AttachOptions options_;
  process::ProcessMemory memory_;
  python::Interpreter interp_;
  python::Layout layout_;
  python::Objects objects_;
  python::CodeCache codes_;
  python::StackWalker walker_;
  python::ThreadNames names_;
  python::PthreadTids tid_finder_;
  mutable bool exited_ = false;
};

// One attempt: discovery, layout, and a check that the runtime holds a live interpreter with at
// least one thread (not yet true just after exec).
Result<std::unique_ptr<PythonProcess>> try_attach(pid_t pid, const AttachOptions& options) {
  process::ProcessMemory memory(pid);
  auto interp = python::discover_interpreter(pid, memory);
  if (!interp) return interp.error();
  auto layout = python::layout_for(interp->major, interp->minor);
  if (!layout) {
    return Error{fmt::format("process {} runs Python {}, which dapprof cannot read (supported: "
                             "CPython 3.8 to 3.13)",
                             pid, interp->version),
                 ErrorCode::UnsupportedVersion};
  }
  if (layout->at_least(3, 13)) {
    std::vector<std::byte> debug(python::kDebugOffsetsSize);
    if (auto s = memory.read(interp->runtime, debug.data(), debug.size()); !s) return s.error();
    if (auto s = python::apply_debug_offsets(*layout, debug); !s) return s.error();
  }
  if (auto missing = python::missing_fields(*layout); !missing.empty()) {
    return Error{fmt::format("internal error: the Python {} layout lacks {}", interp->version,
                             missing)};
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
  spdlog::debug("attached to {} (Python {}, {}, _PyRuntime at {:#x})", pid, interp->version,
                interp->binary, interp->runtime);
  return std::unique_ptr<PythonProcess>(
      std::make_unique<PythonProcessImpl>(pid, options, std::move(*interp), *layout));
}

}  // namespace

Result<std::unique_ptr<PythonProcess>> PythonProcess::attach(pid_t pid,
                                                             const AttachOptions& options) {
  if (options.native) {
    return Error{"native frames are not supported yet", ErrorCode::InvalidArgument};
  }
  const auto deadline = std::chrono::steady_clock::now() + options.wait_for_interpreter;
  while (true) {
    auto attached = try_attach(pid, options);
    if (attached) return attached;
    // Retry what a starting process can still grow out of (no libpython mapped yet, runtime not
    // initialised, a pyenv shim that has not exec'd python yet); give up on the rest.
    const auto code = attached.code();
    const bool transient = code == ErrorCode::NotPython || code == ErrorCode::Generic;
    if (!transient || std::chrono::steady_clock::now() >= deadline) return attached;
    if (gone(pid)) {
      return Error{fmt::format("process {} exited before its Python interpreter started", pid),
                   ErrorCode::ProcessExited};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace dapprof::sampler
