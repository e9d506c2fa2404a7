// Start Profiling in a debug session whose adapter is not dapprof: a `debugpy` (or the older
// `python`) session of the Python extension, or any session whose adapter announces its process
// (the DAP `process` event with systemProcessId). Such a session is profiled by a profile-only
// dapprof attached to that process, run by the extension itself (profile-run.ts), not as a
// second debug session; so is each child process the session announces (its child sessions'
// process events) while its parent is being profiled. The runs stream into the same panel, line
// heat and status bar as any other, and end with their session. A "dapprof" session (the proxy
// path) is the controller's own and not handled here.

import * as vscode from 'vscode';
import { ProfileRun } from './profile-run';
import { errorMessage, type ProfiledSession } from './session';

/** What the controller does for the runs of this module. */
export interface AttachedHost {
  /** A run's adapter is ready: profile it like any session (it supports profiling). */
  addRun(run: ProfileRun): void;
  startProfiling(session: ProfiledSession): Promise<boolean>;
  stopProfiling(session: ProfiledSession): Promise<boolean>;
  /** Whether profiling of `session` is in progress (starting, running or stopping). */
  isProfiling(session: ProfiledSession): boolean;
  runEvent(run: ProfileRun, event: string, body: unknown): void;
  runEnded(run: ProfileRun): void;
  /** The context keys and status bar, after a change here. */
  update(): void;
}

/** Debug types whose sessions are dapprof's own: profiled through their adapter, not by attaching. */
const OWN_TYPES = new Set(['dapprof', 'dapprof-profile']);

interface ProcessMessage {
  type?: string;
  event?: string;
  body?: { systemProcessId?: unknown };
}

export type AttachedState = 'none' | 'idle' | 'busy' | 'profiling';

export class AttachedProfiler implements vscode.Disposable {
  /** Debug sessions of other adapters that announced their process: the process ID. */
  private readonly pids = new Map<string, { session: vscode.DebugSession; pid: number }>();
  /** The run of each such session, while its dapprof runs. */
  private readonly runs = new Map<string, ProfileRun>();
  private readonly starting = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];

  /** @param dapprof the dapprof to run for a session's folder (the settings', else the bundled one) */
  constructor(
    private readonly host: AttachedHost,
    private readonly dapprof: (folder: vscode.WorkspaceFolder | undefined) => Promise<string>,
  ) {
    this.disposables.push(
      vscode.debug.registerDebugAdapterTrackerFactory('*', {
        createDebugAdapterTracker: (session) =>
          OWN_TYPES.has(session.type)
            ? undefined
            : {
                onDidSendMessage: (m: ProcessMessage) => {
                  const pid = m?.type === 'event' && m.event === 'process' ? m.body?.systemProcessId : undefined;
                  if (typeof pid === 'number' && Number.isInteger(pid) && pid > 0) this.onProcess(session, pid);
                },
              },
      }),
      vscode.debug.onDidTerminateDebugSession((s) => this.onTerminated(s)),
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    for (const run of this.runs.values()) void run.stop();
  }

  /** Whether Start Profiling of `session` means attaching to its process. */
  offers(session: ProfiledSession | undefined): boolean {
    return !!session && this.pids.has(session.id);
  }

  /** The run attached to `session`'s process, if dapprof runs for it. */
  runOf(session: ProfiledSession | undefined): ProfileRun | undefined {
    return session ? this.runs.get(session.id) : undefined;
  }

  /** For the toolbar's buttons: whether `session` can start (idle) or stop (profiling) an attached run. */
  state(session: ProfiledSession | undefined): AttachedState {
    if (!session || !this.pids.has(session.id)) return 'none';
    if (this.starting.has(session.id)) return 'busy';
    const run = this.runs.get(session.id);
    return run && this.host.isProfiling(run) ? 'profiling' : 'idle';
  }

  async start(session: ProfiledSession): Promise<boolean> {
    const known = this.pids.get(session.id);
    if (!known || this.starting.has(session.id)) return false;
    // dapprof stays attached between runs of a session: a new run starts on it.
    const current = this.runs.get(session.id);
    if (current && !current.isEnded) return this.host.startProfiling(current);
    this.starting.add(session.id);
    this.host.update();
    let run: ProfileRun;
    try {
      const exe = await this.dapprof(known.session.workspaceFolder);
      run = await ProfileRun.attach(exe, `${known.session.name} (process ${known.pid})`, known.session.workspaceFolder, known.pid, {
        event: (r, event, body) => this.host.runEvent(r, event, body),
        ended: (r) => this.onRunEnded(session.id, r),
      });
    } catch (e) {
      void vscode.window.showErrorMessage(`Could not profile "${known.session.name}" (process ${known.pid}): ${errorMessage(e)}`);
      return false;
    } finally {
      this.starting.delete(session.id);
      this.host.update();
    }
    // The session ended while dapprof attached: nothing to profile any more.
    if (!this.pids.has(session.id)) {
      void run.stop();
      return false;
    }
    this.runs.set(session.id, run);
    this.host.addRun(run);
    const ok = await this.host.startProfiling(run);
    // Its child processes that already run are profiled as well; later ones when they announce themselves.
    if (ok) for (const { session: s } of this.pids.values()) if (this.isDescendant(s, session.id) && !this.runs.has(s.id)) void this.start(s);
    return ok;
  }

  private isDescendant(session: vscode.DebugSession, ancestorId: string): boolean {
    for (let p = session.parentSession; p; p = p.parentSession) if (p.id === ancestorId) return true;
    return false;
  }

  /** Stops the session's run; dapprof stays attached, so the run stays exportable and Start starts another. */
  async stop(session: ProfiledSession): Promise<boolean> {
    const run = this.runs.get(session.id);
    return run ? this.host.stopProfiling(run) : false;
  }

  private onProcess(session: vscode.DebugSession, pid: number): void {
    this.pids.set(session.id, { session, pid });
    this.host.update();
    // A child process of a session being profiled is profiled as well.
    for (const [id, run] of this.runs) {
      if (this.isDescendant(session, id) && this.host.isProfiling(run)) {
        void this.start(session);
        break;
      }
    }
  }

  private onTerminated(session: vscode.DebugSession): void {
    if (!this.pids.delete(session.id)) return;
    // The run ends with its session (its last batch and summary arrive before dapprof ends).
    const run = this.runs.get(session.id);
    if (run) void this.end(run);
    this.host.update();
  }

  /** Stops a run in progress as Stop Profiling would (its summary shown), then detaches. */
  private async end(run: ProfileRun): Promise<void> {
    if (this.host.isProfiling(run)) await this.host.stopProfiling(run).catch(() => false);
    await run.stop();
  }

  private onRunEnded(sessionId: string, run: ProfileRun): void {
    if (this.runs.get(sessionId) === run) this.runs.delete(sessionId);
    this.host.runEnded(run);
    this.host.update();
  }
}
