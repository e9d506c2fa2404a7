// Generated from schemas/*.schema.json by tools/protocol/generate.py. Do not edit: change the
// schemas (or the generator) and run `python3 tools/protocol/generate.py --output`; the test
// protocol_generated (and test/unit/schemas.test.ts) fails when this file is stale.
//
// Types of dapprof's profiling extension of the Debug Adapter Protocol. docs/PROFILING.md is the
// reference for every field; schemas/ holds the JSON Schemas they are generated from.

/** The requests of the profiling extension. */
export const COMMANDS = {
  startProfiling: 'startProfiling',
  stopProfiling: 'stopProfiling',
  exportProfile: 'exportProfile',
  asyncTasks: 'asyncTasks',
} as const;
export type ProfilingCommand = (typeof COMMANDS)[keyof typeof COMMANDS];

/** Its events. */
export const EVENTS = {
  profilingData: 'profilingData',
  profilingStopped: 'profilingStopped',
} as const;

/** The capability in the initialize response that says the adapter has them. */
export const SUPPORTS_PROFILING = 'supportsProfiling';
/** The capability that says startProfiling accepts `stacks`. */
export const SUPPORTS_PROFILING_STACKS = 'supportsProfilingStacks';

/** The file formats of the protocol's "format" fields. */
export const PROFILE_FORMATS = [
  'speedscope',
  'cpuprofile',
  'collapsed',
  'flamegraph',
  'chrometrace',
  'pprof',
  'gecko',
] as const;
export type ProfileFormat = (typeof PROFILE_FORMATS)[number];
export const DEFAULT_FORMAT: ProfileFormat = 'speedscope';

/** The values of profilingStopped.reason. */
export const STOP_REASONS = ['requested', 'exited', 'error', 'disconnected'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/**
 * Whose code the frame runs, as the daemon classifies it once: "debugger" for debugpy's and
 * pydevd's own frames (Python, or their compiled modules), which a view of the program may hide.
 * Absent means "program". Independent of native: a compiled pydevd frame is both.
 */
export const FRAME_ORIGINS = ['program', 'debugger'] as const;
export type FrameOrigin = (typeof FRAME_ORIGINS)[number];

/**
 * An asyncio task's frame (runs with async sampling): `function` is the task's name, `file` is
 * empty and `line` 0, and the value is the task's state at that sample, part of the frame's
 * identity: "running" (its thread's event loop was stepping it), "waiting" (suspended; a task
 * awaiting another is waiting), "cancelling" (cancel() was asked and it has not finished),
 * "unknown" (the version does not tell). Absent for other frames.
 */
export const TASK_STATES = ['running', 'waiting', 'cancelling', 'unknown'] as const;
export type TaskState = (typeof TASK_STATES)[number];

/**
 * Sampling by asyncio task. "running": a thread that is running a task has that task's stack: its
 * coroutine frames under a frame of the task (frames with `task`), under the tasks that await it,
 * under one "(event loop)" frame standing for the loop's own frames. "all": that, and every other
 * pending task once per tick as well, as a waiting task's stack that ends where it awaits (wall
 * time, kept whatever `idle` says). Threads that run no task keep their own stacks. Default "off":
 * threads' stacks as they are.
 */
export const ASYNC_MODES = ['off', 'running', 'all'] as const;
export type AsyncMode = (typeof ASYNC_MODES)[number];

/**
 * Which threads a sample holds, by name as CPython 3.15's own profiler (`python -m
 * profiling.sampling --mode`) names them. "wall": every thread, idle ones included (as `idle`).
 * "cpu": threads the kernel shows on a CPU or runnable (state R), whatever Python code they run or
 * whether they hold the GIL. "gil": only the thread holding the GIL, running or not (as `gil`).
 * "exception": only threads handling an exception (inside an `except` or `finally` block, or a
 * `with` block's __exit__ seeing one), with a frame of kind `exception` naming its type on top of
 * the stack. "active", the default: threads the kernel shows running and not waiting in a
 * well-known waiting function (threading's waits, selectors, socket accept): "cpu" without the
 * threads caught between two waits. `idle` and `gil` are older names for "wall" and "gil"; a `mode`
 * other than "active" with a conflicting `idle` or `gil` is refused (invalidArguments).
 */
export const SAMPLING_MODES = ['active', 'wall', 'cpu', 'gil', 'exception'] as const;
export type SamplingMode = (typeof SAMPLING_MODES)[number];

/**
 * How content holds the document: text, or base64 of the bytes of a binary format (pprof). A client
 * writes the decoded bytes to the file.
 */
export const CONTENT_ENCODINGS = ['text', 'base64'] as const;
export type ContentEncoding = (typeof CONTENT_ENCODINGS)[number];

/** Error ids of the profiling requests (body.error.id of an error response). */
export const ProfilingErrorId = {
  /** A fault inside dapprof; the message says what failed. */
  Internal: 2000,
  /** An argument is missing, of the wrong type or out of range; the message names it. */
  InvalidArguments: 2001,
  /** The session has no debuggee process (yet): the debug adapter sent no process event. */
  NoDebuggee: 2002,
  /** A run is already starting or running in this session. */
  AlreadyProfiling: 2003,
  /** stopProfiling while no run is running or waiting to be collected. */
  NotProfiling: 2004,
  /** The process is not running a CPython interpreter dapprof can find. */
  NotPython: 2005,
  /** The interpreter's version or build cannot be read by this dapprof. */
  UnsupportedVersion: 2006,
  /** The daemon may not read the process's memory; the message gives the remedy. */
  PermissionDenied: 2007,
  /** The process does not exist, or is not part of this debug session. */
  NoSuchProcess: 2008,
  /** The process exited before sampling could start. */
  ProcessExited: 2009,
  /** The profile file could not be written. */
  OutputFailed: 2010,
  /**
   * exportProfile while the session has no run to export (none was started, or it did not start).
   */
  NoProfile: 2011,
  /** asyncTasks on a process that has not imported asyncio: it has no tasks. */
  NoAsyncio: 2012,
} as const;
export type ProfilingErrorIdValue =
  (typeof ProfilingErrorId)[keyof typeof ProfilingErrorId];

export interface FunctionStats {
  function: string;
  /** Source file, or the shared object of a native function. */
  file: string;
  /** Samples in which it was the innermost frame. */
  self: number;
  /** Samples in which it was on the stack (once per sample, even if recursive). */
  total: number;
}

export interface Frame {
  file: string;
  /** 0 when unknown. */
  line: number;
  function: string;
  /** A native (C) frame; absent for Python frames. */
  native?: boolean;
  /**
   * An asyncio task's frame (runs with async sampling): `function` is the task's name, `file` is
   * empty and `line` 0, and the value is the task's state at that sample, part of the frame's
   * identity: "running" (its thread's event loop was stepping it), "waiting" (suspended; a task
   * awaiting another is waiting), "cancelling" (cancel() was asked and it has not finished),
   * "unknown" (the version does not tell). Absent for other frames.
   */
  task?: TaskState;
  /**
   * The frame standing for the exception a thread is handling (runs with mode "exception"), on top
   * of its stack: `function` is "(exception) " and the exception's type name (e.g. "(exception)
   * ValueError"), `file` is empty and `line` 0. Absent for other frames.
   */
  exception?: boolean;
  /**
   * The garbage collector's frame (`function` "(garbage collection)", `file` empty, `line` 0): on
   * top of the stack of the thread running a collection at that sample, unless startProfiling's
   * `gc` is false. Absent for other frames.
   */
  gc?: boolean;
  /** Shared object of a native frame. */
  module?: string;
  /**
   * Whose code the frame runs, as the daemon classifies it once: "debugger" for debugpy's and
   * pydevd's own frames (Python, or their compiled modules), which a view of the program may hide.
   * Absent means "program". Independent of native: a compiled pydevd frame is both.
   */
  origin?: FrameOrigin;
}

export interface Instruction {
  /**
   * The frame (a Python function at a line) the instruction belongs to, as announced in newFrames.
   */
  frame: number;
  /** Byte offset of the instruction in its code object's bytecode (as dis shows it). */
  offset: number;
  /**
   * The opcode's name as the interpreter executed it: a specialised form where the adaptive
   * interpreter (3.11+) had specialised it ("BINARY_OP_MULTIPLY_INT").
   */
  opcode: string;
  /**
   * The generic opcode this one stands for ("BINARY_OP"): a specialised form's family, a 3.11
   * adaptive form's (LOAD_ATTR_ADAPTIVE stands for LOAD_ATTR) or a 3.12+ instrumented form's
   * (INSTRUMENTED_CALL for CALL); absent when opcode is already generic. Whether opcode is
   * specialised is `specialized`, not whether this is present.
   */
  baseOpcode?: string;
  /**
   * Whether the adaptive interpreter (3.11+) had specialised the instruction
   * (BINARY_OP_MULTIPLY_INT): false for a generic one, for 3.11's adaptive forms (not yet
   * specialised) and for 3.12+'s instrumented forms.
   */
  specialized: boolean;
  /** First line of the instruction's source range (3.11+); 0 when unknown. */
  line?: number;
  /** Last line of the range (3.11+); absent when unknown. */
  endLine?: number;
  /**
   * Start of the range on its first line, in UTF-8 bytes from 0, as code.co_positions() gives it
   * (3.11+); absent when unknown.
   */
  column?: number;
  /** End of the range on its last line, exclusive, in UTF-8 bytes (3.11+); absent when unknown. */
  endColumn?: number;
}

export interface ThreadInfo {
  name: string;
  /** The Linux thread id (TID). */
  osThreadId: number;
  /** Process the thread belongs to. */
  pid?: number;
  /** threading.get_ident(), as a decimal string (it exceeds 2^53). */
  pythonThreadId?: string;
}

export interface ProcessInfo {
  /** The process's PID, as its threads' `pid`. */
  pid: number;
  /**
   * Its arguments joined by spaces, as ps shows them, read when sampling of it started; empty if it
   * was gone by then.
   */
  commandLine: string;
  /**
   * true: the process ended (or can no longer be read) and has no more samples; those it had stay.
   * Absent in its first announcement.
   */
  exited?: boolean;
}

/**
 * The `arguments` of a startProfiling request. Every field is optional; unknown fields are ignored.
 */
export interface StartProfilingArguments {
  /** Samples per second (Hz). Default 100. */
  rate?: number;
  /** Native (C) frames are merged into the Python stacks. Default false. */
  native?: boolean;
  /**
   * Threads are read while they run and a stack that changed during its read may be torn (counted
   * as an error). Default false: consistent stacks; each is read in one system call and checked
   * afterwards, and only if it kept moving are the threads paused for that sample.
   */
  nonblocking?: boolean;
  /**
   * Which threads a sample holds, by name as CPython 3.15's own profiler (`python -m
   * profiling.sampling --mode`) names them. "wall": every thread, idle ones included (as `idle`).
   * "cpu": threads the kernel shows on a CPU or runnable (state R), whatever Python code they run
   * or whether they hold the GIL. "gil": only the thread holding the GIL, running or not (as
   * `gil`). "exception": only threads handling an exception (inside an `except` or `finally` block,
   * or a `with` block's __exit__ seeing one), with a frame of kind `exception` naming its type on
   * top of the stack. "active", the default: threads the kernel shows running and not waiting in a
   * well-known waiting function (threading's waits, selectors, socket accept): "cpu" without the
   * threads caught between two waits. `idle` and `gil` are older names for "wall" and "gil"; a
   * `mode` other than "active" with a conflicting `idle` or `gil` is refused (invalidArguments).
   */
  mode?: SamplingMode;
  /**
   * Idle threads (waiting on I/O, a lock, sleep) are sampled too: the same as `mode` "wall".
   * Default false.
   */
  idle?: boolean;
  /** Only the thread holding the GIL is sampled: the same as `mode` "gil". Default false. */
  gil?: boolean;
  /**
   * The thread running a garbage collection has a frame of the collector on top of its stack
   * (frames with `gc`), on every version where CPython's collector state is readable (3.7+, default
   * builds). Default true; false leaves the stacks as the Python frames are.
   */
  gc?: boolean;
  /**
   * Each sample also records the bytecode instruction every Python frame was at (its offset, opcode
   * as executed, specialised or adaptive, and on CPython 3.11+ the source columns of the expression
   * it belongs to), and profilingData carries, per source line, how many samples each instruction
   * took (newInstructions, instructionCounts): what a client needs to show which expression of a
   * line is hot. Frames and stacks are the same as without it. Default false.
   */
  opcodes?: boolean;
  /** Child Python processes of the profiled process are sampled too. Default false. */
  subprocesses?: boolean;
  /**
   * Sampling by asyncio task. "running": a thread that is running a task has that task's stack: its
   * coroutine frames under a frame of the task (frames with `task`), under the tasks that await it,
   * under one "(event loop)" frame standing for the loop's own frames. "all": that, and every other
   * pending task once per tick as well, as a waiting task's stack that ends where it awaits (wall
   * time, kept whatever `idle` says). Threads that run no task keep their own stacks. Default
   * "off": threads' stacks as they are.
   */
  async?: AsyncMode;
  /** How often profilingData events are sent, in milliseconds. Default 100. */
  batchIntervalMs?: number;
  /**
   * Samples are sent as stack IDs with counts: each distinct stack is announced once, in newStacks,
   * and profilingData carries stackIds, stackCounts and threadIds instead of samples. Default
   * false: every sample's frame IDs in samples.
   */
  stacks?: boolean;
  /** The process to profile: the debuggee (default) or one of its descendants. */
  pid?: number;
  /**
   * The debuggee's PID on the machine dapprof runs on, for a debuggee in another PID namespace (a
   * container) that dapprof cannot find by itself from the PID debugpy reports. It must be that
   * process: the one its own PID namespace knows by debugpy's PID, running the program debugpy
   * names. `pid` then names one of its descendants.
   */
  processId?: number;
}

/**
 * The `body` of a successful startProfiling response: the process being sampled and the settings in
 * effect.
 */
export interface StartProfilingResponseBody {
  /** The process being sampled. */
  pid: number;
  /** The interpreter's version, e.g. "3.12.1". */
  pythonVersion: string;
  /** Samples per second (Hz). Default 100. */
  rate: number;
  /** Native (C) frames are merged into the Python stacks. Default false. */
  native: boolean;
  /**
   * Threads are read while they run and a stack that changed during its read may be torn (counted
   * as an error). Default false: consistent stacks; each is read in one system call and checked
   * afterwards, and only if it kept moving are the threads paused for that sample.
   */
  nonblocking: boolean;
  /**
   * The sampling mode in effect (see startProfiling's mode), whether asked by `mode` or by
   * `idle`/`gil`.
   */
  mode: SamplingMode;
  /** Idle threads are sampled too (mode "wall"). */
  idle: boolean;
  /** Only the thread holding the GIL is sampled (mode "gil"). */
  gil: boolean;
  /** Child Python processes of the profiled process are sampled too. Default false. */
  subprocesses: boolean;
  /** Sampling by asyncio task, as asked (see startProfiling's async). */
  async: AsyncMode;
  /** How often profilingData events are sent, in milliseconds. Default 100. */
  batchIntervalMs: number;
  /**
   * Samples are sent as stack IDs with counts: each distinct stack is announced once, in newStacks,
   * and profilingData carries stackIds, stackCounts and threadIds instead of samples. Default
   * false: every sample's frame IDs in samples.
   */
  stacks: boolean;
  /**
   * Present when the user should be told something about this run, e.g. that the interpreter is a
   * Python version newer than the tested ones, sampled because its _Py_DebugOffsets have the shape
   * of a known version's.
   */
  warning?: string;
}

/** The `arguments` of a stopProfiling request. Without outputPath no file is written. */
export interface StopProfilingArguments {
  /** Absolute path of the profile file to write. */
  outputPath?: string;
  /** File format. Default speedscope. Requires outputPath. */
  format?: ProfileFormat;
  /**
   * Leave the debugger's own frames (origin "debugger") out of the file and of topFunctions, as the
   * live view does when it hides them: a sample taken wholly in the debugger is counted under one
   * "(debugger)" frame. Default false.
   */
  hideDebugger?: boolean;
}

/** The `body` of a successful stopProfiling response: totals of the run. */
export interface ProfilingSummary {
  /** Samples taken (and not dropped) during the whole run. */
  sampleCount: number;
  /** Length of the run in milliseconds. */
  duration: number;
  /** Failed reads during the run. */
  errorCount: number;
  /** Samples taken but never sent because the client read too slowly. */
  droppedSampleCount: number;
  /** The profile file written, absent when none was. */
  outputPath?: string;
  /**
   * The functions that took the most samples, at most 20, by self then total samples, descending;
   * debugger frames left out when hideDebugger was asked. The same list, with the same columns, is
   * what every client shows as the run's summary.
   */
  topFunctions?: FunctionStats[];
}

/**
 * The `body` of a profilingData event: the samples of one batch, and the frames, threads and
 * processes they reference for the first time.
 */
export interface ProfilingDataBody {
  /** Frames referenced for the first time in this profiling run, by ID (decimal string). */
  newFrames: Record<string, Frame>;
  /**
   * With stacks: the stacks referenced for the first time in this profiling run, by stack ID
   * (decimal string), each a list of frame IDs, root (outermost) first. A stack is announced once
   * per run, in the event of its first use or earlier.
   */
  newStacks?: Record<string, number[]>;
  /**
   * One stack per thread per tick, each a list of frame IDs, root (outermost) first. Always empty
   * in a run started with stacks: stackIds carries the samples.
   */
  samples: number[][];
  /**
   * With stacks: the samples in the order taken, as runs of consecutive samples of one thread with
   * one stack: the stack of each run.
   */
  stackIds?: number[];
  /** With stacks: how many consecutive samples each run of stackIds stands for, parallel to it. */
  stackCounts?: number[];
  /** Number of samples: the length of samples, or with stacks the sum of stackCounts. */
  sampleCount: number;
  /** Milliseconds of sampling covered by this event. */
  duration: number;
  /** The thread of each sample, parallel to samples; with stacks, parallel to stackIds. */
  threadIds?: number[];
  /** Threads first sampled in this event, or whose name changed, by ID (decimal string). */
  threads?: Record<string, ThreadInfo>;
  /**
   * Processes announced by pid (decimal string): each once when first sampled (the debuggee's own,
   * then each child process of a run with `subprocesses`), and once more with `exited` when a child
   * ends or can no longer be read. A process that execs another program is announced with `exited`
   * as the program it was, then again, without, with its new command line. A thread's `pid` names
   * its process. Absent when there is nothing to announce.
   */
  processes?: Record<string, ProcessInfo>;
  /** Samples discarded since the previous event because the client read too slowly. */
  droppedSampleCount?: number;
  /** Failed reads since the previous event. */
  errorCount?: number;
  /**
   * With opcodes: instructions counted for the first time in this profiling run, by instruction ID
   * (decimal string). Announced once per run, in the event of their first count or earlier.
   */
  newInstructions?: Record<string, Instruction>;
  /**
   * With opcodes: the samples taken since the previous event at each instruction, three integers
   * per instruction: its ID, own, total. Own counts the samples whose innermost Python frame was at
   * the instruction, total the samples with a frame at it anywhere on the stack (once per sample
   * however deep it recurses). An instruction absent from an event took no samples in it; its
   * length is a multiple of 3.
   */
  instructionCounts?: number[];
  /**
   * Wall-clock time of the first sample in this event, in milliseconds since the Unix epoch. Absent
   * when samples is empty.
   */
  startTime?: number;
  /**
   * Wall-clock time of the last sample in this event, in milliseconds since the Unix epoch. Absent
   * when samples is empty.
   */
  endTime?: number;
}

/**
 * The `body` of a profilingStopped event, sent when sampling ends other than by a stopProfiling
 * request.
 */
export interface ProfilingStoppedBody extends ProfilingSummary {
  reason: StopReason;
  /** What happened, for a person. */
  message?: string;
}

/**
 * The `arguments` of an exportProfile request: the profile of the session's current run (while
 * sampling: everything so far) or of its last finished run, in a file format, returned in the
 * response instead of written to a file, for a client that does not share the daemon's file system.
 * A finished run stays exportable until the next startProfiling.
 */
export interface ExportProfileArguments {
  /** File format. Default speedscope. */
  format?: ProfileFormat;
  /** As in stopProfiling. Default false. */
  hideDebugger?: boolean;
}

/**
 * The `body` of a successful exportProfile response: the whole document, exactly what stopProfiling
 * would write to outputPath.
 */
export interface ExportProfileResponseBody {
  /** The format of content. */
  format: ProfileFormat;
  /**
   * The usual extension of a file in this format, without the leading dot (json, cpuprofile, txt,
   * svg, pb.gz).
   */
  fileExtension: string;
  /**
   * The document: the text itself (UTF-8) in every format but pprof, whose gzipped bytes are
   * base64-encoded (contentEncoding).
   */
  content: string;
  /**
   * How content holds the document: text, or base64 of the bytes of a binary format (pprof). A
   * client writes the decoded bytes to the file.
   */
  contentEncoding: ContentEncoding;
  /** Samples in the document. */
  sampleCount: number;
}

export interface TaskFrame {
  /** The function's qualified name. */
  name: string;
  /** The code object's file name, as the interpreter has it. */
  file: string;
  /** The line being executed (0 when unknown). */
  line: number;
}

export interface AsyncTask {
  /** The task object's address in hex, as `python -m asyncio ps` shows it. */
  id: string;
  /** The task's name (Task.get_name()). */
  name: string;
  /**
   * running: its thread's event loop is stepping it now; waiting: suspended; cancelling: cancel()
   * was asked and it has not finished; unknown: this version does not say (see missing).
   */
  state: TaskState;
  /**
   * The Linux thread id of the thread whose event loop holds the task; 0 for the interpreter's own
   * list (a thread that has ended).
   */
  thread: number;
  /**
   * The ids of the tasks (or other futures) awaiting this one: a TaskGroup's parent, gather's or
   * shield's caller, a task doing `await task`.
   */
  awaited_by: string[];
  /**
   * Innermost first: the suspended coroutines, from the one the task runs down to the one it
   * awaits; for the running task, its thread's frames down to its coroutine.
   */
  frames: TaskFrame[];
}

/**
 * The `arguments` of an asyncTasks request: read every pending asyncio task of the debuggee (or of
 * one of its descendants) once, as `python -m asyncio pstree` would show them. The program's
 * threads are paused for the read (a few hundred ms for a thousand tasks); the session stays
 * responsive meanwhile.
 */
export interface AsyncTasksArguments {
  /** The process to read: the debuggee (default) or one of its descendants. */
  pid?: number;
}

/**
 * The `body` of a successful asyncTasks response: the document `dapprof dump --async --json`
 * prints, the same keys and values. A task's children are the tasks whose awaited_by holds its id;
 * tasks awaited by none are the roots.
 */
export interface AsyncTasksResponseBody {
  /** The interpreter's version, e.g. "3.14.0". */
  python_version: string;
  /** Every pending task of every thread's event loop, in the order the interpreter lists them. */
  tasks: AsyncTask[];
  /** Tasks that changed while read (freed or moving) and are left out, as a torn stack is. */
  torn: number;
  /**
   * The read stopped at its limit (100,000 tasks, or 256 coroutines in one task's chain): more
   * tasks exist than are listed.
   */
  truncated: boolean;
  /**
   * What this version keeps that could not be read, one sentence each, for the client to show
   * beside the tasks: the list is then not the whole picture.
   */
  missing: string[];
}

/** What the daemon takes for each absent startProfiling argument. */
export const START_DEFAULTS = {
  rate: 100,
  native: false,
  nonblocking: false,
  mode: 'active',
  idle: false,
  gil: false,
  gc: true,
  opcodes: false,
  subprocesses: false,
  async: 'off',
  batchIntervalMs: 100,
  stacks: false,
} as const satisfies StartProfilingArguments;

/** The ranges of the startProfiling arguments that have one (inclusive). */
export const START_RANGES = {
  rate: { minimum: 1, maximum: 10000 },
  batchIntervalMs: { minimum: 10, maximum: 5000 },
  pid: { minimum: 1, maximum: 2147483647 },
  processId: { minimum: 1, maximum: 2147483647 },
} as const;

/** What the daemon takes for each absent stopProfiling argument. */
export const STOP_DEFAULTS = {
  format: 'speedscope',
  hideDebugger: false,
} as const satisfies StopProfilingArguments;

/** What the daemon takes for each absent exportProfile argument. */
export const EXPORT_DEFAULTS = {
  format: 'speedscope',
  hideDebugger: false,
} as const satisfies ExportProfileArguments;

/** The ranges of the asyncTasks arguments that have one (inclusive). */
export const ASYNC_RANGES = {
  pid: { minimum: 1, maximum: 2147483647 },
} as const;
