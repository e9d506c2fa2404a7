// Generated from schemas/*.schema.json by tools/protocol/generate.py. Do not edit: change the
// schemas (or the generator) and run `python3 tools/protocol/generate.py --output`; the test
// protocol_generated fails when this file is stale.
// clang-format off: the layout is the generator's, and reformatting would make it stale.
#pragma once
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "model/profile_format.hpp"
#include "protocol/json.hpp"

namespace dapprof::protocol {

// Requests of the profiling extension.
inline constexpr std::string_view kStartProfiling = "startProfiling";
inline constexpr std::string_view kStopProfiling = "stopProfiling";
inline constexpr std::string_view kExportProfile = "exportProfile";
inline constexpr std::string_view kAsyncTasks = "asyncTasks";
// Its events.
inline constexpr std::string_view kProfilingData = "profilingData";
inline constexpr std::string_view kProfilingStopped = "profilingStopped";
// The capability in the initialize response that says the adapter has them.
inline constexpr std::string_view kSupportsProfiling = "supportsProfiling";
// The capability that says startProfiling accepts `stacks`.
inline constexpr std::string_view kSupportsProfilingStacks = "supportsProfilingStacks";

// body.error.id of error responses, stable so that clients may react to them.
enum class ProfilingErrorId : int {
  // A fault inside dapprof; the message says what failed.
  Internal = 2000,
  // An argument is missing, of the wrong type or out of range; the message names it.
  InvalidArguments = 2001,
  // The session has no debuggee process (yet): the debug adapter sent no process event.
  NoDebuggee = 2002,
  // A run is already starting or running in this session.
  AlreadyProfiling = 2003,
  // stopProfiling while no run is running or waiting to be collected.
  NotProfiling = 2004,
  // The process is not running a CPython interpreter dapprof can find.
  NotPython = 2005,
  // The interpreter's version or build cannot be read by this dapprof.
  UnsupportedVersion = 2006,
  // The daemon may not read the process's memory; the message gives the remedy.
  PermissionDenied = 2007,
  // The process does not exist, or is not part of this debug session.
  NoSuchProcess = 2008,
  // The process exited before sampling could start.
  ProcessExited = 2009,
  // The profile file could not be written.
  OutputFailed = 2010,
  // exportProfile while the session has no run to export (none was started, or it did not start).
  NoProfile = 2011,
  // asyncTasks on a process that has not imported asyncio: it has no tasks.
  NoAsyncio = 2012,
};
std::string_view to_string(ProfilingErrorId id);

// The protocol's names of the file formats (its "format" fields), in the schemas'
// order.
inline constexpr std::array<std::pair<std::string_view, model::ProfileFormat>, 7>
    kProfileFormatNames = {{
        {"speedscope", model::ProfileFormat::Speedscope},
        {"cpuprofile", model::ProfileFormat::Cpuprofile},
        {"collapsed", model::ProfileFormat::Collapsed},
        {"flamegraph", model::ProfileFormat::Flamegraph},
        {"chrometrace", model::ProfileFormat::ChromeTrace},
        {"pprof", model::ProfileFormat::Pprof},
        {"gecko", model::ProfileFormat::Gecko},
    }};
inline constexpr model::ProfileFormat kDefaultProfileFormat = model::ProfileFormat::Speedscope;
std::string_view to_string(model::ProfileFormat format);
std::optional<model::ProfileFormat> parse_profile_format(std::string_view name);

enum class StoppedReason { Requested, Exited, Error, Disconnected };
inline constexpr std::array<std::pair<std::string_view, StoppedReason>, 4> kStoppedReasonNames = {{
    {"requested", StoppedReason::Requested},
    {"exited", StoppedReason::Exited},
    {"error", StoppedReason::Error},
    {"disconnected", StoppedReason::Disconnected},
}};
std::string_view to_string(StoppedReason value);
std::optional<StoppedReason> parse_stopped_reason(std::string_view name);

// Whose code the frame runs, as the daemon classifies it once: "debugger" for debugpy's and
// pydevd's own frames (Python, or their compiled modules), which a view of the program may hide.
// Absent means "program". Independent of native: a compiled pydevd frame is both.
inline constexpr std::string_view kFrameOriginProgram = "program";
inline constexpr std::string_view kFrameOriginDebugger = "debugger";

// An asyncio task's frame (runs with async sampling): `function` is the task's name, `file` is
// empty and `line` 0, and the value is the task's state at that sample, part of the frame's
// identity: "running" (its thread's event loop was stepping it), "waiting" (suspended; a task
// awaiting another is waiting), "cancelling" (cancel() was asked and it has not finished),
// "unknown" (the version does not tell). Absent for other frames.
inline constexpr std::string_view kFrameTaskRunning = "running";
inline constexpr std::string_view kFrameTaskWaiting = "waiting";
inline constexpr std::string_view kFrameTaskCancelling = "cancelling";
inline constexpr std::string_view kFrameTaskUnknown = "unknown";

// Sampling by asyncio task. "running": a thread that is running a task has that task's stack: its
// coroutine frames under a frame of the task (frames with `task`), under the tasks that await it,
// under one "(event loop)" frame standing for the loop's own frames. "all": that, and every other
// pending task once per tick as well, as a waiting task's stack that ends where it awaits (wall
// time, kept whatever `idle` says). Threads that run no task keep their own stacks. Default "off":
// threads' stacks as they are.
enum class AsyncMode { Off, Running, All };
inline constexpr std::array<std::pair<std::string_view, AsyncMode>, 3> kAsyncModeNames = {{
    {"off", AsyncMode::Off},
    {"running", AsyncMode::Running},
    {"all", AsyncMode::All},
}};
std::string_view to_string(AsyncMode value);
std::optional<AsyncMode> parse_async_mode(std::string_view name);

// Which threads a sample holds, by name as CPython 3.15's own profiler (`python -m
// profiling.sampling --mode`) names them. "wall": every thread, idle ones included (as `idle`).
// "cpu": threads the kernel shows on a CPU or runnable (state R), whatever Python code they run or
// whether they hold the GIL. "gil": only the thread holding the GIL, running or not (as `gil`).
// "exception": only threads handling an exception (inside an `except` or `finally` block, or a
// `with` block's __exit__ seeing one), with a frame of kind `exception` naming its type on top of
// the stack. "active", the default: threads the kernel shows running and not waiting in a
// well-known waiting function (threading's waits, selectors, socket accept): "cpu" without the
// threads caught between two waits. `idle` and `gil` are older names for "wall" and "gil"; a `mode`
// other than "active" with a conflicting `idle` or `gil` is refused (invalidArguments).
enum class SamplingMode { Active, Wall, Cpu, Gil, Exception };
inline constexpr std::array<std::pair<std::string_view, SamplingMode>, 5> kSamplingModeNames = {{
    {"active", SamplingMode::Active},
    {"wall", SamplingMode::Wall},
    {"cpu", SamplingMode::Cpu},
    {"gil", SamplingMode::Gil},
    {"exception", SamplingMode::Exception},
}};
std::string_view to_string(SamplingMode value);
std::optional<SamplingMode> parse_sampling_mode(std::string_view name);

// How content holds the document: text, or base64 of the bytes of a binary format (pprof). A client
// writes the decoded bytes to the file.
enum class ContentEncoding { Text, Base64 };
inline constexpr std::array<std::pair<std::string_view, ContentEncoding>, 2> kContentEncodingNames = {{
    {"text", ContentEncoding::Text},
    {"base64", ContentEncoding::Base64},
}};
std::string_view to_string(ContentEncoding value);
std::optional<ContentEncoding> parse_content_encoding(std::string_view name);

// Ranges and defaults of the requests' integer arguments.
inline constexpr int kDefaultRateHz = 100;
inline constexpr int kMinRateHz = 1;
inline constexpr int kMaxRateHz = 10000;
inline constexpr int kDefaultBatchIntervalMs = 100;
inline constexpr int kMinBatchIntervalMs = 10;
inline constexpr int kMaxBatchIntervalMs = 5000;
inline constexpr pid_t kMinPid = 1;
inline constexpr pid_t kMaxPid = 2147483647;
inline constexpr int kMinProcessId = 1;
inline constexpr int kMaxProcessId = 2147483647;
inline constexpr std::size_t kMaxTopFunctions = 20;

// Field names of the messages encoded by hand (protocol/batch.cpp, for speed): frame, instruction,
// thread, process, profilingData, taskFrame, asyncTask, asyncTasksResponse.
namespace keys {
namespace frame {
inline constexpr std::string_view kFile = "file";
inline constexpr std::string_view kLine = "line";
inline constexpr std::string_view kFunction = "function";
inline constexpr std::string_view kNative = "native";
inline constexpr std::string_view kTask = "task";
inline constexpr std::string_view kException = "exception";
inline constexpr std::string_view kGc = "gc";
inline constexpr std::string_view kModule = "module";
inline constexpr std::string_view kOrigin = "origin";
}  // namespace frame
namespace instruction {
inline constexpr std::string_view kFrame = "frame";
inline constexpr std::string_view kOffset = "offset";
inline constexpr std::string_view kOpcode = "opcode";
inline constexpr std::string_view kBaseOpcode = "baseOpcode";
inline constexpr std::string_view kSpecialized = "specialized";
inline constexpr std::string_view kLine = "line";
inline constexpr std::string_view kEndLine = "endLine";
inline constexpr std::string_view kColumn = "column";
inline constexpr std::string_view kEndColumn = "endColumn";
}  // namespace instruction
namespace thread {
inline constexpr std::string_view kName = "name";
inline constexpr std::string_view kOsThreadId = "osThreadId";
inline constexpr std::string_view kPid = "pid";
inline constexpr std::string_view kPythonThreadId = "pythonThreadId";
}  // namespace thread
namespace process {
inline constexpr std::string_view kPid = "pid";
inline constexpr std::string_view kCommandLine = "commandLine";
inline constexpr std::string_view kExited = "exited";
}  // namespace process
namespace profiling_data {
inline constexpr std::string_view kNewFrames = "newFrames";
inline constexpr std::string_view kNewStacks = "newStacks";
inline constexpr std::string_view kSamples = "samples";
inline constexpr std::string_view kStackIds = "stackIds";
inline constexpr std::string_view kStackCounts = "stackCounts";
inline constexpr std::string_view kSampleCount = "sampleCount";
inline constexpr std::string_view kDuration = "duration";
inline constexpr std::string_view kThreadIds = "threadIds";
inline constexpr std::string_view kThreads = "threads";
inline constexpr std::string_view kProcesses = "processes";
inline constexpr std::string_view kDroppedSampleCount = "droppedSampleCount";
inline constexpr std::string_view kErrorCount = "errorCount";
inline constexpr std::string_view kNewInstructions = "newInstructions";
inline constexpr std::string_view kInstructionCounts = "instructionCounts";
inline constexpr std::string_view kStartTime = "startTime";
inline constexpr std::string_view kEndTime = "endTime";
}  // namespace profiling_data
namespace task_frame {
inline constexpr std::string_view kName = "name";
inline constexpr std::string_view kFile = "file";
inline constexpr std::string_view kLine = "line";
}  // namespace task_frame
namespace async_task {
inline constexpr std::string_view kId = "id";
inline constexpr std::string_view kName = "name";
inline constexpr std::string_view kState = "state";
inline constexpr std::string_view kThread = "thread";
inline constexpr std::string_view kAwaitedBy = "awaited_by";
inline constexpr std::string_view kFrames = "frames";
}  // namespace async_task
namespace async_tasks_response {
inline constexpr std::string_view kPythonVersion = "python_version";
inline constexpr std::string_view kTasks = "tasks";
inline constexpr std::string_view kTorn = "torn";
inline constexpr std::string_view kTruncated = "truncated";
inline constexpr std::string_view kMissing = "missing";
}  // namespace async_tasks_response
}  // namespace keys

struct FunctionStats {
  std::string function;
  // Source file, or the shared object of a native function.
  std::string file;
  // Samples in which it was the innermost frame.
  double self = 0;
  // Samples in which it was on the stack (once per sample, even if recursive).
  double total = 0;

  // Required fields must be present, and null counts as absent. Unknown fields are ignored. Each
  // invalid field gives an error naming it, with code InvalidArgument.
  static Result<FunctionStats> parse(const Json& json);
  friend bool operator==(const FunctionStats&, const FunctionStats&) = default;
};
Json to_json(const FunctionStats& value);

// The `arguments` of a startProfiling request. Every field is optional; unknown fields are ignored.
struct StartProfilingArguments {
  // Samples per second (Hz). Default 100.
  int rate = kDefaultRateHz;
  // Native (C) frames are merged into the Python stacks. Default false.
  bool native = false;
  // Threads are read while they run and a stack that changed during its read may be torn (counted
  // as an error). Default false: consistent stacks; each is read in one system call and checked
  // afterwards, and only if it kept moving are the threads paused for that sample.
  bool nonblocking = false;
  // Which threads a sample holds, by name as CPython 3.15's own profiler (`python -m
  // profiling.sampling --mode`) names them. "wall": every thread, idle ones included (as `idle`).
  // "cpu": threads the kernel shows on a CPU or runnable (state R), whatever Python code they run
  // or whether they hold the GIL. "gil": only the thread holding the GIL, running or not (as
  // `gil`). "exception": only threads handling an exception (inside an `except` or `finally` block,
  // or a `with` block's __exit__ seeing one), with a frame of kind `exception` naming its type on
  // top of the stack. "active", the default: threads the kernel shows running and not waiting in a
  // well-known waiting function (threading's waits, selectors, socket accept): "cpu" without the
  // threads caught between two waits. `idle` and `gil` are older names for "wall" and "gil"; a
  // `mode` other than "active" with a conflicting `idle` or `gil` is refused (invalidArguments).
  SamplingMode mode = SamplingMode::Active;
  // Idle threads (waiting on I/O, a lock, sleep) are sampled too: the same as `mode` "wall".
  // Default false.
  bool idle = false;
  // Only the thread holding the GIL is sampled: the same as `mode` "gil". Default false.
  bool gil = false;
  // The thread running a garbage collection has a frame of the collector on top of its stack
  // (frames with `gc`), on every version where CPython's collector state is readable (3.7+, default
  // builds). Default true; false leaves the stacks as the Python frames are.
  bool gc = true;
  // Each sample also records the bytecode instruction every Python frame was at (its offset, opcode
  // as executed, specialised or adaptive, and on CPython 3.11+ the source columns of the expression
  // it belongs to), and profilingData carries, per source line, how many samples each instruction
  // took (newInstructions, instructionCounts): what a client needs to show which expression of a
  // line is hot. Frames and stacks are the same as without it. Default false.
  bool opcodes = false;
  // Child Python processes of the profiled process are sampled too. Default false.
  bool subprocesses = false;
  // Sampling by asyncio task. "running": a thread that is running a task has that task's stack: its
  // coroutine frames under a frame of the task (frames with `task`), under the tasks that await it,
  // under one "(event loop)" frame standing for the loop's own frames. "all": that, and every other
  // pending task once per tick as well, as a waiting task's stack that ends where it awaits (wall
  // time, kept whatever `idle` says). Threads that run no task keep their own stacks. Default
  // "off": threads' stacks as they are.
  AsyncMode async = AsyncMode::Off;
  // How often profilingData events are sent, in milliseconds. Default 100.
  int batch_interval_ms = kDefaultBatchIntervalMs;
  // Samples are sent as stack IDs with counts: each distinct stack is announced once, in newStacks,
  // and profilingData carries stackIds, stackCounts and threadIds instead of samples. Default
  // false: every sample's frame IDs in samples.
  bool stacks = false;
  // The process to profile: the debuggee (default) or one of its descendants.
  std::optional<pid_t> pid;
  // The debuggee's PID on the machine dapprof runs on, for a debuggee in another PID namespace (a
  // container) that dapprof cannot find by itself from the PID debugpy reports. It must be that
  // process: the one its own PID namespace knows by debugpy's PID, running the program debugpy
  // names. `pid` then names one of its descendants.
  std::optional<int> process_id;

  // `json` is the request's "arguments" member: null or absent means all defaults, and so does a
  // null field. Unknown fields are ignored. Each invalid field gives an error naming it, with code
  // InvalidArgument.
  static Result<StartProfilingArguments> parse(const Json& json);
  friend bool operator==(const StartProfilingArguments&, const StartProfilingArguments&) = default;
};
Json to_json(const StartProfilingArguments& value);

// The `body` of a successful startProfiling response: the process being sampled and the settings in
// effect.
struct StartProfilingResponse {
  // The process being sampled.
  pid_t pid = 0;
  // The interpreter's version, e.g. "3.12.1".
  std::string python_version;
  // Samples per second (Hz). Default 100.
  int rate = 0;
  // Native (C) frames are merged into the Python stacks. Default false.
  bool native = false;
  // Threads are read while they run and a stack that changed during its read may be torn (counted
  // as an error). Default false: consistent stacks; each is read in one system call and checked
  // afterwards, and only if it kept moving are the threads paused for that sample.
  bool nonblocking = false;
  // The sampling mode in effect (see startProfiling's mode), whether asked by `mode` or by
  // `idle`/`gil`.
  SamplingMode mode = SamplingMode::Active;
  // Idle threads are sampled too (mode "wall").
  bool idle = false;
  // Only the thread holding the GIL is sampled (mode "gil").
  bool gil = false;
  // Child Python processes of the profiled process are sampled too. Default false.
  bool subprocesses = false;
  // Sampling by asyncio task, as asked (see startProfiling's async).
  AsyncMode async = AsyncMode::Off;
  // How often profilingData events are sent, in milliseconds. Default 100.
  int batch_interval_ms = 0;
  // Samples are sent as stack IDs with counts: each distinct stack is announced once, in newStacks,
  // and profilingData carries stackIds, stackCounts and threadIds instead of samples. Default
  // false: every sample's frame IDs in samples.
  bool stacks = false;
  // Present when the user should be told something about this run, e.g. that the interpreter is a
  // Python version newer than the tested ones, sampled because its _Py_DebugOffsets have the shape
  // of a known version's.
  std::string warning;

  // The response to a start with these settings, on process `pid`.
  static StartProfilingResponse from(const StartProfilingArguments& enabled, pid_t pid,
                                     std::string python_version);

  // Required fields must be present, and null counts as absent. Unknown fields are ignored. Each
  // invalid field gives an error naming it, with code InvalidArgument.
  static Result<StartProfilingResponse> parse(const Json& json);
  friend bool operator==(const StartProfilingResponse&, const StartProfilingResponse&) = default;
};
Json to_json(const StartProfilingResponse& value);

// The `arguments` of a stopProfiling request. Without outputPath no file is written.
struct StopProfilingArguments {
  // Absolute path of the profile file to write.
  std::optional<std::string> output_path;
  // File format. Default speedscope. Requires outputPath.
  model::ProfileFormat format = model::ProfileFormat::Speedscope;
  // Leave the debugger's own frames (origin "debugger") out of the file and of topFunctions, as the
  // live view does when it hides them: a sample taken wholly in the debugger is counted under one
  // "(debugger)" frame. Default false.
  bool hide_debugger = false;

  // `json` is the request's "arguments" member: null or absent means all defaults, and so does a
  // null field. Unknown fields are ignored. Each invalid field gives an error naming it, with code
  // InvalidArgument.
  static Result<StopProfilingArguments> parse(const Json& json);
  friend bool operator==(const StopProfilingArguments&, const StopProfilingArguments&) = default;
};
Json to_json(const StopProfilingArguments& value);

// The `body` of a successful stopProfiling response: totals of the run.
struct ProfilingSummary {
  // Samples taken (and not dropped) during the whole run.
  std::uint64_t sample_count = 0;
  // Length of the run in milliseconds.
  double duration_ms = 0;
  // Failed reads during the run.
  std::uint64_t error_count = 0;
  // Samples taken but never sent because the client read too slowly.
  std::uint64_t dropped_sample_count = 0;
  // The profile file written, absent when none was.
  std::optional<std::string> output_path;
  // The functions that took the most samples, at most 20, by self then total samples, descending;
  // debugger frames left out when hideDebugger was asked. The same list, with the same columns, is
  // what every client shows as the run's summary.
  std::vector<FunctionStats> top_functions;

  // Required fields must be present, and null counts as absent. Unknown fields are ignored. Each
  // invalid field gives an error naming it, with code InvalidArgument.
  static Result<ProfilingSummary> parse(const Json& json);
  friend bool operator==(const ProfilingSummary&, const ProfilingSummary&) = default;
};
Json to_json(const ProfilingSummary& value);

// The `body` of a profilingStopped event, sent when sampling ends other than by a stopProfiling
// request.
struct ProfilingStopped {
  StoppedReason reason = StoppedReason::Requested;
  // What happened, for a person.
  std::string message;
  // The fields of the stopProfiling response, in the same object.
  ProfilingSummary summary;

  // Required fields must be present, and null counts as absent. Unknown fields are ignored. Each
  // invalid field gives an error naming it, with code InvalidArgument.
  static Result<ProfilingStopped> parse(const Json& json);
  friend bool operator==(const ProfilingStopped&, const ProfilingStopped&) = default;
};
Json to_json(const ProfilingStopped& value);

// The `arguments` of an exportProfile request: the profile of the session's current run (while
// sampling: everything so far) or of its last finished run, in a file format, returned in the
// response instead of written to a file, for a client that does not share the daemon's file system.
// A finished run stays exportable until the next startProfiling.
struct ExportProfileArguments {
  // File format. Default speedscope.
  model::ProfileFormat format = model::ProfileFormat::Speedscope;
  // As in stopProfiling. Default false.
  bool hide_debugger = false;

  // `json` is the request's "arguments" member: null or absent means all defaults, and so does a
  // null field. Unknown fields are ignored. Each invalid field gives an error naming it, with code
  // InvalidArgument.
  static Result<ExportProfileArguments> parse(const Json& json);
  friend bool operator==(const ExportProfileArguments&, const ExportProfileArguments&) = default;
};
Json to_json(const ExportProfileArguments& value);

// The `body` of a successful exportProfile response: the whole document, exactly what stopProfiling
// would write to outputPath.
struct ExportProfileResponse {
  // The format of content.
  model::ProfileFormat format = model::ProfileFormat::Speedscope;
  // The usual extension of a file in this format, without the leading dot (json, cpuprofile, txt,
  // svg, pb.gz).
  std::string file_extension;
  // The document: the text itself (UTF-8) in every format but pprof, whose gzipped bytes are
  // base64-encoded (contentEncoding).
  std::string content;
  // How content holds the document: text, or base64 of the bytes of a binary format (pprof). A
  // client writes the decoded bytes to the file.
  ContentEncoding content_encoding = ContentEncoding::Text;
  // Samples in the document.
  std::uint64_t sample_count = 0;

  // Required fields must be present, and null counts as absent. Unknown fields are ignored. Each
  // invalid field gives an error naming it, with code InvalidArgument.
  static Result<ExportProfileResponse> parse(const Json& json);
  friend bool operator==(const ExportProfileResponse&, const ExportProfileResponse&) = default;
};
Json to_json(const ExportProfileResponse& value);

// The `arguments` of an asyncTasks request: read every pending asyncio task of the debuggee (or of
// one of its descendants) once, as `python -m asyncio pstree` would show them. The program's
// threads are paused for the read (a few hundred ms for a thousand tasks); the session stays
// responsive meanwhile.
struct AsyncTasksArguments {
  // The process to read: the debuggee (default) or one of its descendants.
  std::optional<pid_t> pid;

  // `json` is the request's "arguments" member: null or absent means all defaults, and so does a
  // null field. Unknown fields are ignored. Each invalid field gives an error naming it, with code
  // InvalidArgument.
  static Result<AsyncTasksArguments> parse(const Json& json);
  friend bool operator==(const AsyncTasksArguments&, const AsyncTasksArguments&) = default;
};
Json to_json(const AsyncTasksArguments& value);

}  // namespace dapprof::protocol
