// Messages between the extension host and the flame graph webview.

import type { AsyncMode, ProfilingDataBody, ProfilingSummary, StopReason } from '../model/protocol';

export interface RunInfo {
  /** Debug session name, shown in the header. */
  session: string;
  pid?: number;
  pythonVersion?: string;
  /** Samples per second in effect. */
  rate?: number;
  /** Sampling by asyncio task in effect (the startProfiling response's); "all" enables the panel's "Waiting tasks". */
  async?: AsyncMode;
  /**
   * How dapprof profiles the run: `proxy`, it is the session's debug adapter (a "dapprof"
   * session); `attached`, a profile-only dapprof attached to the process of a debug session of
   * another adapter (debugpy's); `profile-only`, dapprof without a debugger.
   */
  path?: RunPath;
}

export type RunPath = 'proxy' | 'attached' | 'profile-only';

/** What the panel says of each path. */
export const RUN_PATH_LABEL: Record<RunPath, string> = {
  proxy: 'via the dapprof debug adapter',
  attached: "attached to the debug session's process",
  'profile-only': 'profile only, no debugger',
};

export interface StoppedInfo {
  summary: ProfilingSummary;
  reason?: StopReason | 'stopProfiling';
  message?: string;
}

/** Extension -> webview. */
export type ToWebview =
  /** Nothing to show yet: no profiling run in the selected session. */
  | { type: 'idle'; message: string }
  /** A run started (or is starting): clear everything, wait for data. */
  | { type: 'run'; run: RunInfo }
  | { type: 'data'; body: ProfilingDataBody }
  /**
   * A run already in progress or finished, for a view opened late: its profilingData bodies as
   * received, oldest first, less the oldest `omittedSamples` samples (their frames kept) when the
   * run outgrew what the extension keeps.
   */
  | { type: 'replay'; run: RunInfo; bodies: ProfilingDataBody[]; omittedSamples: number; stopped?: StoppedInfo; error?: string }
  | { type: 'stopped'; stopped: StoppedInfo }
  | { type: 'error'; message: string }
  /** Zoom into and focus the node of a function (or of one of its lines) that has the most samples. */
  | { type: 'reveal'; file: string; function: string; line?: number }
  /** Compare with a baseline: the profilingData bodies of another run (a file's, say), or none (null). */
  | { type: 'baseline'; label: string; bodies: ProfilingDataBody[] | null };

/**
 * Webview -> extension. The page tells its "Hide debugger" choice when it loads and when it
 * changes, so that an export and the stop summary show what the panel shows.
 */
export type FromWebview =
  | { type: 'ready'; hideDebugger: boolean }
  | { type: 'hideDebugger'; hideDebugger: boolean }
  /** The thread filter changed (null: all threads), for the editor's line heat. */
  | { type: 'thread'; thread: number | null }
  | { type: 'openSource'; file: string; line: number }
  /** "Compare with a file…": the extension asks for a profile file and answers with `baseline`. */
  | { type: 'pickBaseline' };
