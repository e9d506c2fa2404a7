// PythonProcess::attach: discovery -> layout -> a check that the runtime is live, retried while
// a starting interpreter initialises.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <thread>

#include "sampler/native/native_stacks.hpp"
#include "sampler/process/tasks.hpp"
#include "sampler/python/discovery.hpp"
#include "sampler/python/handled_exception.hpp"
#include "sampler/python/layout.hpp"
#include "sampler/python/python_process.hpp"
#include "sampler/python/task_sampling.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::sampler {
namespace {

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

// Whether the runtime holds an interpreter whose first thread state is its own. Three reads of
// a running program: a thread that ends between them leaves a freed thread state behind, so a
// mismatch is read again (a few times) before it is believed.
Status check_live(pid_t pid, const process::ProcessMemory& memory, python::Address runtime,
                  const python::Layout& layout) {
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    auto head = memory.read_pointer(runtime + layout.runtime_interpreters_head);
    if (!head) return head.error();
    if (*head == 0) {
      return Error{fmt::format("process {}: the Python interpreter is not initialised yet", pid),
                   ErrorCode::NotPython};
    }
    auto threads = memory.read_pointer(*head + layout.interp_threads_head);
    if (!threads) return threads.error();
    if (*threads == 0) {
      return Error{fmt::format("process {}: the Python interpreter has no thread yet", pid),
                   ErrorCode::NotPython};
    }
    auto tstate_interp = memory.read_pointer(*threads + layout.tstate_interp);
    if (tstate_interp && *tstate_interp == *head) return Ok{};
    if (attempt == kAttempts) {
      if (!tstate_interp) return tstate_interp.error();
      return Error{fmt::format("process {}: _PyRuntime does not hold a valid interpreter", pid),
                   ErrorCode::NotPython};
    }
  }
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
  if (auto live = check_live(pid, memory, interp->runtime, *layout); !live) return live.error();
  if (options.async != model::AsyncMode::Off)
    if (auto s = python::async_sampling_supported(*layout, interp->version); !s) return s.error();
  if (options.exceptions && !python::HandledExceptions::readable(*layout))
    return Error{fmt::format("the sampling mode \"exception\" cannot read the exceptions a thread "
                             "handles on Python {}: use another mode",
                             interp->version),
                 ErrorCode::UnsupportedVersion};
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
  return python::open_process(pid, options, std::move(*interp), *layout, std::move(native),
                              std::move(warning));
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
