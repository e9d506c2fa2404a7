#pragma once
// The sampler's public interface: attach to a CPython process and read its threads' stacks
// (PythonProcess), or sample it periodically on a thread of its own (Sampler).
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "model/sampling_settings.hpp"
#include "model/snapshot.hpp"
#include "sampler/async_tasks.hpp"

namespace dapprof::sampler {

// How a sample's reads were made consistent (see AttachOptions::nonblocking).
struct ReadCounts {
  std::uint64_t first_reads = 0;  // samples read unpaused and found unchanged at once
  std::uint64_t retries = 0;      // unpaused reads that found the stack moving, so read again
  std::uint64_t paused = 0;       // samples read with the threads paused
  // How long those pauses held the threads stopped, summed: what they can have cost the program.
  std::chrono::nanoseconds stopped{0};
};

// The line a frame reports: where it is (the default), where its function starts (so that the
// samples of a function aggregate into one entry: record --function), or none (--nolineno).
enum class LineNumbers { Current, FunctionStart, None };

struct AttachOptions {
  // true: read while the program runs (cheapest, a stack may be torn); false: consistent stacks.
  // Consistent reads first try without pausing: every thread's stack is fetched in one system
  // call and its top frame pointer read again afterwards. A read that went past the fetch (the
  // first, or a stack that grew) is made again from a plan that covers it; only a stack that
  // moved twice has the threads ptrace-stopped for that sample. With native, threads are always
  // paused (registers).
  bool nonblocking = false;
  // Merge native frames (libunwind). Needs blocking mode: with nonblocking, attach fails with
  // InvalidArgument.
  bool native = false;
  // A just-started interpreter may not be initialised yet: retry until it validates or this
  // much time has passed (0: one attempt).
  std::chrono::milliseconds wait_for_interpreter{0};
  // With native: also keep the interpreter's own call machinery (PyObject_Call...,
  // _PyEval_Vector...) and the frames outside the outermost Python frame (_start, thread entry).
  bool native_all = false;
  // For callers that drop idle threads: a thread the kernel shows sleeping is neither stopped
  // nor walked, and is left out of snapshots (one sleeping in a known waiting function is
  // walked, and appears with active=false). In blocking mode only
  // the running threads are then stopped at each sample; a debugged program has half a dozen
  // threads of the debugger's, nearly always asleep, each of which a stop would wake.
  bool skip_idle = false;
  // While the interpreter's garbage collector runs, the thread holding the GIL (the one running
  // it) gets model::gc_frame() on top of its stack. Costs one word read per interpreter.
  bool gc = true;
  // Read each Python frame's local variables into ThreadStack::locals (dump --locals). The
  // values change as the program runs: unless nonblocking, threads are paused for the read.
  bool locals = false;
  // Read the type of the exception each thread is handling into ThreadStack::exception (the
  // sampling mode "exception").
  bool exceptions = false;
  LineNumbers lines = LineNumbers::Current;
  // Each Python frame of a thread's stack gets its bytecode instruction (model::Instruction; with
  // its source columns from 3.11): one more batched read per sample (3.11+), where the version
  // has a generated opcode table (3.8-3.15).
  bool opcodes = false;
  // Sample by asyncio task (model::AsyncMode; python/task_stacks.hpp says what a sample is then).
  // Attach fails with UnsupportedVersion on a version whose tasks cannot be read.
  model::AsyncMode async = model::AsyncMode::Off;
};

class PythonProcess {
 public:
  virtual ~PythonProcess() = default;
  // Errors name the cause and the fix: no such process, not CPython, unsupported version
  // (naming it), permission denied (ptrace_scope, CAP_SYS_PTRACE, container flags).
  static Result<std::unique_ptr<PythonProcess>> attach(pid_t pid, const AttachOptions& options);

  virtual pid_t pid() const = 0;
  virtual const std::string& python_version() const = 0;  // e.g. "3.11.7"
  // What the user should be told once about this target ("" for none): a version newer than
  // dapprof's tested ones, sampled because its debug offsets have a known shape.
  virtual const std::string& warning() const = 0;
  // Reads all threads once (including idle ones; callers filter). Fails cleanly if the process
  // exited or, in nonblocking mode, if a torn read was detected.
  virtual Result<model::Snapshot> snapshot() = 0;
  // True once the process is gone (snapshot() failures after this are not sampling errors).
  virtual bool exited() const = 0;
  virtual ReadCounts read_counts() const = 0;
  // Every pending asyncio task, its coroutines and its awaiters (dump --async), read with the
  // threads paused unless AttachOptions::nonblocking. UnsupportedVersion where the version's
  // tasks cannot be read, NotPython where asyncio is not imported.
  virtual Result<AsyncTasks> async_tasks() = 0;
  // The regions (address, size) the next sample fetches at once: for benchmarks, which compare
  // the sampler with a loop making just these reads.
  virtual std::vector<std::pair<std::uint64_t, std::size_t>> read_plan() const = 0;
};

struct SamplerOptions {
  model::SamplingSettings sampling;  // as the user chose them
  std::chrono::milliseconds wait_for_interpreter{0};
  bool native_all = false;  // see AttachOptions
  LineNumbers lines = LineNumbers::Current;
  bool opcodes = false;  // see AttachOptions
};

struct SamplerStats {
  std::uint64_t samples = 0;  // snapshots delivered
  std::uint64_t errors = 0;   // failed reads (torn, transient)
  std::uint64_t late = 0;     // ticks that started behind schedule
  ReadCounts reads;           // of the main process
};

enum class StopReason { Requested, Exited, Error };

class Sampler {
 public:
  using OnSnapshot = std::function<void(model::Snapshot&&)>;
  using OnStop = std::function<void(StopReason, const std::string& message)>;

  // Attaches to pid (errors as for PythonProcess::attach) and starts sampling on a thread of its
  // own. on_snapshot and on_stop run on that thread. on_stop runs exactly once.
  static Result<std::unique_ptr<Sampler>> start(pid_t pid, const SamplerOptions& options,
                                                OnSnapshot on_snapshot, OnStop on_stop);
  virtual ~Sampler() = default;  // stops and joins
  virtual void stop() = 0;       // idempotent; returns once the sampling thread has finished
  virtual SamplerStats stats() const = 0;
  virtual pid_t pid() const = 0;
  virtual const std::string& python_version() const = 0;
  virtual const std::string& warning() const = 0;  // of the main process, as PythonProcess's
};

}  // namespace dapprof::sampler
