// Messages between the extension host and the flame graph webview.

import type { ProfileSnapshot } from '../model/profile';
import type { ProfilingDataBody, ProfilingSummary, StopReason } from '../model/protocol';

export interface RunInfo {
  /** Debug session name, shown in the header. */
  session: string;
  pid?: number;
  pythonVersion?: string;
  /** Samples per second in effect. */
  rate?: number;
}

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
  /** The state of a run already in progress or finished, for a view opened late. */
  | { type: 'snapshot'; run: RunInfo; snapshot: ProfileSnapshot; stopped?: StoppedInfo; error?: string }
  | { type: 'stopped'; stopped: StoppedInfo }
  | { type: 'error'; message: string };

/** Webview -> extension. */
export type FromWebview = { type: 'ready' } | { type: 'openSource'; file: string; line: number };
