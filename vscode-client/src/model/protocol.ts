// Types of dapprof's profiling extension of the Debug Adapter Protocol.
// docs/PROFILING.md is the reference for every field; schemas/ holds the JSON Schemas.

export interface Frame {
  file: string;
  line: number;
  function: string;
  native?: boolean;
  module?: string;
  /** Whose code the frame runs, as the daemon classifies it; absent means 'program'. */
  origin?: 'program' | 'debugger';
}

export interface ThreadInfo {
  name: string;
  osThreadId: number;
  pid?: number;
  pythonThreadId?: string;
}

export interface ProfilingDataBody {
  newFrames: Record<string, Frame>;
  samples: number[][];
  sampleCount: number;
  duration: number;
  threadIds?: number[];
  threads?: Record<string, ThreadInfo>;
  droppedSampleCount?: number;
  errorCount?: number;
  /** Epoch milliseconds of the batch's first and last sample. */
  startTime?: number;
  endTime?: number;
}

export interface StartProfilingArguments {
  rate?: number;
  native?: boolean;
  nonblocking?: boolean;
  idle?: boolean;
  gil?: boolean;
  subprocesses?: boolean;
  batchIntervalMs?: number;
  pid?: number;
}

export interface StartProfilingResponseBody {
  pid: number;
  pythonVersion: string;
  rate: number;
  native: boolean;
  nonblocking: boolean;
  idle: boolean;
  gil: boolean;
  subprocesses: boolean;
  batchIntervalMs: number;
  /** Something to tell the user, e.g. an untested (newer) Python version. */
  warning?: string;
}

export interface FunctionStats {
  function: string;
  /** Source file, or the shared object of a native function. */
  file: string;
  self: number;
  total: number;
}

export interface ProfilingSummary {
  sampleCount: number;
  duration: number;
  errorCount: number;
  droppedSampleCount: number;
  outputPath?: string;
  /** At most 20, by self then total samples, descending. */
  topFunctions?: FunctionStats[];
}

export type StopReason = 'exited' | 'error' | 'disconnected' | 'requested';

export interface ProfilingStoppedBody extends ProfilingSummary {
  reason: StopReason;
  message?: string;
}

export interface StopProfilingArguments {
  outputPath?: string;
  format?: 'speedscope' | 'cpuprofile' | 'collapsed' | 'flamegraph' | 'chrometrace';
  hideDebugger?: boolean;
}

export interface ExportProfileArguments {
  format?: 'speedscope' | 'cpuprofile' | 'collapsed' | 'flamegraph' | 'chrometrace';
  hideDebugger?: boolean;
}

export interface ExportProfileResponseBody {
  format: 'speedscope' | 'cpuprofile' | 'collapsed' | 'flamegraph' | 'chrometrace';
  /** Without the dot: json, cpuprofile, txt, svg. */
  fileExtension: string;
  content: string;
  sampleCount: number;
}

/** Error ids of the profiling requests (body.error.id of an error response). */
export const ProfilingErrorId = {
  Internal: 2000,
  InvalidArguments: 2001,
  NoDebuggee: 2002,
  AlreadyProfiling: 2003,
  NotProfiling: 2004,
  NotPython: 2005,
  UnsupportedVersion: 2006,
  PermissionDenied: 2007,
  NoSuchProcess: 2008,
  ProcessExited: 2009,
  OutputFailed: 2010,
  NoProfile: 2011,
} as const;
