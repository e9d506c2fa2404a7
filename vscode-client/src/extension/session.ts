// What the extension knows of one debug session's profiling: whether its adapter supports it,
// the run state, and the current or last run's raw stream (kept for the panel, see run-stream.ts).

import * as vscode from 'vscode';
import { ASYNC_MODES, AsyncMode, ProfilingSummary, SAMPLING_MODES, SamplingMode, StartProfilingArguments } from '../model/protocol';
import type { RunInfo, RunPath, StoppedInfo } from '../webview/messages';
import type { RunStream } from './run-stream';

export type ProfilingStatus = 'idle' | 'starting' | 'profiling' | 'stopping';

/** The profiling requests, whose error responses the extension shows. */
export type ProfilingCommand = 'startProfiling' | 'stopProfiling' | 'exportProfile';

/**
 * What the extension uses of a session it profiles: a VS Code debug session, or a profiling run
 * that is none (profile-run.ts).
 */
export type ProfiledSession = Pick<vscode.DebugSession, 'id' | 'type' | 'name' | 'workspaceFolder' | 'configuration' | 'customRequest'>;

export interface SessionProfile {
  session: ProfiledSession;
  supportsProfiling: boolean;
  /** The adapter accepts `stacks` in startProfiling (initialize's supportsProfilingStacks). */
  supportsStacks?: boolean;
  status: ProfilingStatus;
  ended: boolean;
  /** How dapprof profiles this session; undefined: as its adapter (proxy, or profile-only by its type). */
  path?: RunPath;
  /** The kept copy of the last run (run-store.ts), once it is saved. */
  keptId?: string;
  /** The current or last run; undefined before the first start. */
  run?: RunInfo;
  stream?: RunStream;
  stopped?: StoppedInfo;
  error?: string;
  /**
   * The profiling request whose error response VS Code has already shown to the user: it does so
   * itself for DAP errors marked showUser, as dapprof marks them. The extension then does not
   * show the same message a second time.
   */
  errorShownFor?: ProfilingCommand;
}

export function newSessionProfile(session: ProfiledSession): SessionProfile {
  return { session, supportsProfiling: false, status: 'idle', ended: false };
}

export function startArgumentsFromSettings(cfg: vscode.WorkspaceConfiguration): StartProfilingArguments {
  const mode = samplingMode(cfg.get<string>('mode', 'active'));
  return {
    rate: cfg.get<number>('rate', 100),
    native: cfg.get<boolean>('native', false),
    nonblocking: cfg.get<boolean>('nonblocking', false),
    // A mode chosen by name replaces the older switches, which the daemon would refuse beside it.
    ...(mode === 'active' ? { idle: cfg.get<boolean>('idle', false), gil: cfg.get<boolean>('gil', false) } : { mode }),
    subprocesses: cfg.get<boolean>('subprocesses', false),
    // Only when asked: a daemon older than the setting need not know the field.
    ...(cfg.get<boolean>('opcodes', false) ? { opcodes: true } : {}),
    batchIntervalMs: cfg.get<number>('batchIntervalMs', 100),
    async: asyncMode(cfg.get<string>('async', 'off')),
  };
}

/**
 * The launch configuration's `profileProcessId`: the debuggee's PID on this machine, for a
 * program in a container whose debug port is reached through a forwarder (docker-proxy, kubectl
 * port-forward), where dapprof cannot find the process from the PID debugpy reports. A number,
 * or a string of digits (`${command:dapprof.pickProcess}` gives one); undefined when absent; a
 * message saying what is wrong otherwise.
 */
export function profileProcessId(configuration: Readonly<Record<string, unknown>> | undefined): number | undefined | { error: string } {
  const v = configuration?.profileProcessId;
  if (v === undefined || v === null || v === '') return undefined;
  const pid = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (Number.isInteger(pid) && pid >= 1 && pid <= 2147483647) return pid;
  return { error: `"profileProcessId" of the launch configuration must be a process ID of this machine (a positive integer), not ${JSON.stringify(v)}.` };
}

/** The mode setting, "active" for a value it cannot have (a settings.json edited by hand). */
function samplingMode(value: string): SamplingMode {
  return (SAMPLING_MODES as readonly string[]).includes(value) ? (value as SamplingMode) : 'active';
}

/** The async setting, "off" for a value it cannot have (a settings.json edited by hand). */
function asyncMode(value: string): AsyncMode {
  return (ASYNC_MODES as readonly string[]).includes(value) ? (value as AsyncMode) : 'off';
}

/** The message of a rejected customRequest: VS Code rejects with the error response's message. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The session a command applies to: its argument (a session or `{sessionId}`), else the active one. */
export function sessionFromArg(sessions: ReadonlyMap<string, SessionProfile>, arg: unknown): ProfiledSession | undefined {
  const id =
    arg && typeof arg === 'object'
      ? (arg as { sessionId?: unknown }).sessionId ?? ((arg as { id?: unknown; customRequest?: unknown }).customRequest ? (arg as { id: unknown }).id : undefined)
      : undefined;
  if (typeof id === 'string') {
    const s = sessions.get(id);
    if (s) return s.session;
  }
  return vscode.debug.activeDebugSession;
}

/** When the daemon gave no summary: the totals of the batches received, and no top functions. */
export function localSummary(st: SessionProfile): ProfilingSummary {
  const t = st.stream?.totals;
  return { sampleCount: t?.sampleCount ?? 0, duration: t?.duration ?? 0, errorCount: t?.errorCount ?? 0, droppedSampleCount: t?.droppedSampleCount ?? 0 };
}
