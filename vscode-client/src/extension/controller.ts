// Profiling state of debug sessions: which sessions support profiling (their adapter answered
// `initialize` with supportsProfiling, as adapter-tracker.ts sees), the start and stop requests,
// the profilingData stream (forwarded to the flame graph panel and kept raw for a panel opened
// later), and the commands. The status bar and context keys are in status.ts, export in
// export.ts, the stop summary in summary.ts, the shown run's heat in the editor in line-heat.ts,
// finished runs kept beyond their session in kept-runs.ts.

import * as vscode from 'vscode';
import type { ProfilingDataBody, ProfilingStoppedBody, ProfilingSummary, StartProfilingResponseBody, StopProfilingArguments } from '../model/protocol';
import type { RunPath, StoppedInfo } from '../webview/messages';
import { trackAdapters } from './adapter-tracker';
import { AttachedProfiler } from './attached';
import { attachChild } from './children';
import { exportProfile, isExportFormat } from './export';
import { exportEnded, OPEN_KEPT_RUN, openKeptRun, pickBaseline } from './kept-runs';
import { LineHeat, RevealTarget } from './line-heat';
import { FlameGraphPanel } from './panel';
import type { ProfileRun } from './profile-run';
import { RunStore } from './run-store';
import { RunStream } from './run-stream';
import { errorMessage, localSummary, newSessionProfile, ProfiledSession, profileProcessId, SessionProfile, sessionFromArg, startArgumentsFromSettings } from './session';
import { openSource, sessionCwd } from './source';
import { SourcePaths } from './source-paths';
import { StatusView } from './status';
import { announceStopped, SummaryLog } from './summary';

export { CONTEXT_CAN_START, CONTEXT_CAN_STOP, CONTEXT_HAS_PROFILE } from './status';
export { startArgumentsFromSettings } from './session';
export type { ProfilingStatus, SessionProfile } from './session';

export class ProfilingController implements vscode.Disposable {
  readonly sessions = new Map<string, SessionProfile>();
  /** The session whose profile the panel shows. */
  shown: SessionProfile | undefined;
  readonly panel: FlameGraphPanel;
  readonly status = new StatusView();
  readonly summaries = new SummaryLog();
  /**
   * The panel's "Hide debugger" choice, as the page last told it (its default until then): an
   * export and the stop summary follow it, so that they hold what the panel shows.
   */
  hideDebugger = true;
  readonly lineHeat: LineHeat;
  /** A reveal asked for while the panel was loading: sent once it has the run. */
  private pendingReveal: RevealTarget | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** Sessions of other adapters (debugpy's), profiled by a dapprof attached to their process. */
  readonly attached: AttachedProfiler;

  /**
   * @param dapprof the dapprof executable for a folder (dapprof-path.ts), for runs the extension
   *   starts itself and for exports of runs whose session has ended
   * @param store where finished runs are kept (the workspace's storage)
   */
  constructor(
    readonly extensionUri: vscode.Uri,
    private readonly dapprof: (folder: vscode.WorkspaceFolder | undefined) => Promise<string> = async () => 'dapprof',
    readonly store = new RunStore(undefined, () => 0),
  ) {
    this.panel = new FlameGraphPanel(extensionUri, {
      onReady: () => this.onPanelReady(),
      onOpenSource: (file, line) => void openSource(this.shown?.session, file, line),
      onHideDebugger: (hide) => {
        this.hideDebugger = hide;
        this.lineHeat.setView({ hideDebugger: hide });
      },
      onThread: (thread) => this.lineHeat.setView({ thread }),
      onPickBaseline: (webview) => void pickBaseline(this.store, webview, extensionUri.fsPath),
    });
    this.lineHeat = new LineHeat(extensionUri, new SourcePaths(() => sessionCwd(this.shown?.session)));
    this.attached = new AttachedProfiler(
      {
        addRun: (run) => this.addRun(run, 'attached'),
        startProfiling: (session) => this.startProfiling(session),
        stopProfiling: (session) => this.stopProfiling(session),
        isProfiling: (session) => this.isProfiling(session),
        runEvent: (run, event, body) => this.onEvent(run, event, body),
        runEnded: (run) => this.onSessionTerminated(run),
        update: () => this.update(),
      },
      dapprof,
    );
    const d = this.disposables;
    d.push(this.status, this.summaries, this.lineHeat, this.attached);
    d.push(
      trackAdapters({
        supportsProfiling: (session, stacks) => this.markSupportsProfiling(session, stacks),
        errorShown: (session, command) => (this.state(session).errorShownFor = command),
      }),
    );
    d.push(vscode.debug.onDidReceiveDebugSessionCustomEvent((e) => this.onCustomEvent(e)));
    d.push(vscode.debug.onDidChangeActiveDebugSession(() => this.onActiveSessionChanged()));
    d.push(vscode.debug.onDidTerminateDebugSession((s) => this.onSessionTerminated(s)));
    d.push(
      vscode.commands.registerCommand('dapprof.startProfiling', (arg?: unknown) => this.startProfiling(sessionFromArg(this.sessions, arg))),
      vscode.commands.registerCommand('dapprof.stopProfiling', (arg?: unknown) => this.stopProfiling(sessionFromArg(this.sessions, arg))),
      vscode.commands.registerCommand('dapprof.showFlameGraph', () => this.showFlameGraph()),
      vscode.commands.registerCommand('dapprof.exportProfile', (format?: unknown) => this.exportProfile(format)),
      vscode.commands.registerCommand('dapprof.revealInFlameGraph', (target?: RevealTarget) => this.revealInFlameGraph(target)),
      vscode.commands.registerCommand(OPEN_KEPT_RUN, () => this.openKeptRun()),
    );
    this.update();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.panel.dispose();
  }

  private state(session: ProfiledSession): SessionProfile {
    let s = this.sessions.get(session.id);
    if (!s) this.sessions.set(session.id, (s = newSessionProfile(session)));
    return s;
  }

  /** The active debug session if it talks to dapprof (its initialize said supportsProfiling). */
  dapprofSession(): vscode.DebugSession | undefined {
    const active = vscode.debug.activeDebugSession;
    return active && this.sessions.get(active.id)?.supportsProfiling ? active : undefined;
  }

  markSupportsProfiling(session: ProfiledSession, stacks = false): void {
    const st = this.state(session);
    st.supportsProfiling = true;
    st.supportsStacks = stacks;
    this.update();
  }

  /** A run the extension drives (profile-run.ts) whose adapter is ready: a session that supports profiling. */
  addRun(run: ProfileRun, path: RunPath): void {
    this.markSupportsProfiling(run, run.supportsStacks);
    this.state(run).path = path;
  }

  /** Whether a run of `session` is starting, running or stopping. */
  isProfiling(session: ProfiledSession): boolean {
    return (this.sessions.get(session.id)?.status ?? 'idle') !== 'idle';
  }

  /** An event of a run the extension drives; and its end, as a debug session's. */
  onRunEvent(run: ProfileRun, event: string, body: unknown): void {
    this.onEvent(run, event, body);
  }

  onRunEnded(run: ProfileRun): void {
    this.onSessionTerminated(run);
  }

  /** Context keys and status bar, from the live sessions' state. */
  private update(): void {
    this.status.updateContext(this.sessions.values(), this.attached?.state(vscode.debug.activeDebugSession), !!this.shown?.run);
    this.status.updateStatusBar(this.sessions.values());
  }

  // ---- commands ------------------------------------------------------------------------------

  async startProfiling(session: ProfiledSession | undefined): Promise<boolean> {
    if (!session) {
      void vscode.window.showErrorMessage('Cannot start profiling: there is no debug session. Start debugging a Python program first.');
      return false;
    }
    const st = this.state(session);
    // Another adapter's session whose process is known: a dapprof attached to it profiles it.
    if (!st.supportsProfiling && this.attached.offers(session)) return this.attached.start(session);
    if (!st.supportsProfiling) {
      void vscode.window.showErrorMessage(
        `Cannot start profiling: the debug adapter of "${session.name}" does not support profiling. Debug with the "dapprof" debug type, or point "debugServer" at "dapprof serve".`,
      );
      return false;
    }
    if (st.status !== 'idle') return false;
    const processId = profileProcessId(session.configuration);
    if (typeof processId === 'object') {
      void vscode.window.showErrorMessage(`Cannot start profiling "${session.name}": ${processId.error}`);
      return false;
    }
    st.status = 'starting';
    this.update();
    const settings = vscode.workspace.getConfiguration('dapprof.profiling', session.workspaceFolder);
    // Stack IDs with counts cost a fraction of frame IDs per sample; an adapter that does not
    // announce them gets the arguments it knows.
    const args = { ...startArgumentsFromSettings(settings), ...(st.supportsStacks ? { stacks: true } : {}), ...(processId ? { processId } : {}) };
    let resp: StartProfilingResponseBody;
    st.errorShownFor = undefined;
    try {
      resp = (await session.customRequest('startProfiling', args)) as StartProfilingResponseBody;
    } catch (e) {
      st.status = 'idle';
      this.update();
      if (st.errorShownFor !== 'startProfiling') void vscode.window.showErrorMessage(`Could not start profiling "${session.name}": ${errorMessage(e)}`);
      return false;
    }
    if (st.ended) return false; // the session ended while starting
    st.status = 'profiling';
    st.stream = new RunStream();
    st.stopped = undefined;
    st.error = undefined;
    // The sampling by task in effect is the response's (an adapter that knows none echoes none).
    const path = st.path ?? (session.type === 'dapprof-profile' ? 'profile-only' : 'proxy');
    st.run = { session: session.name, pid: resp?.pid, pythonVersion: resp?.pythonVersion, rate: resp?.rate ?? args.rate, ...(resp?.async ? { async: resp.async } : {}), path };
    if (resp?.warning) void vscode.window.showWarningMessage(`dapprof: ${resp.warning}`);
    this.shown = st;
    this.lineHeat.load([], st.run);
    if (settings.get<boolean>('openFlameGraph', true)) this.panel.show(true);
    this.panel.post({ type: 'run', run: st.run });
    this.update();
    return true;
  }

  async stopProfiling(session: ProfiledSession | undefined): Promise<boolean> {
    if (!session) return false;
    if (this.attached.runOf(session)) return this.attached.stop(session);
    const st = this.sessions.get(session.id);
    if (!st || st.status !== 'profiling') {
      void vscode.window.showInformationMessage('Profiling is not running in this debug session.');
      return false;
    }
    st.status = 'stopping';
    st.errorShownFor = undefined;
    this.update();
    // The daemon's top functions then leave out what the panel hides.
    const args: StopProfilingArguments = { hideDebugger: this.hideDebugger };
    try {
      const summary = (await session.customRequest('stopProfiling', args)) as ProfilingSummary;
      this.finishRun(st, { summary, reason: 'stopProfiling' });
    } catch (e) {
      const message = errorMessage(e);
      if (st.status !== 'stopping') return false; // a profilingStopped event ended the run meanwhile
      if (/not running|not profiling/i.test(message)) {
        this.finishRun(st, { summary: localSummary(st), reason: 'requested', message });
      } else {
        st.status = 'profiling';
        this.update();
        if (st.errorShownFor !== 'stopProfiling') void vscode.window.showErrorMessage(`Could not stop profiling "${session.name}": ${message}`);
        return false;
      }
    }
    this.announceStopped(st);
    return true;
  }

  private announceStopped(st: SessionProfile): void {
    announceStopped(st.stopped!.summary, {
      showFlameGraph: () => this.showFlameGraph(st),
      showSummary: () => this.summaries.show(),
      export: () => void this.exportProfile(undefined, st),
    });
  }

  showFlameGraph(st?: SessionProfile): void {
    const target = st ?? this.preferred();
    // An open panel showing this run already has it (and its zoom, search...): only reveal it.
    if (target && target !== this.shown) {
      this.shown = target;
      this.loadHeat();
      if (this.panel.isOpen) this.sendReplay();
    }
    this.panel.show(false);
  }

  /** Shows the panel on a function's (or a line's) node: zoomed into, with the focus. */
  revealInFlameGraph(target: RevealTarget | undefined): void {
    if (!target || typeof target.file !== 'string' || typeof target.function !== 'string' || !this.shown) return;
    this.panel.show(false);
    if (this.panel.isReady) this.panel.post({ type: 'reveal', ...target });
    else this.pendingReveal = target;
  }

  private onPanelReady(): void {
    this.sendReplay();
    const target = this.pendingReveal;
    this.pendingReveal = undefined;
    if (target) this.panel.post({ type: 'reveal', ...target });
  }

  /** The editor's heat follows the shown run. */
  private loadHeat(): void {
    this.lineHeat.load(this.shown?.stream?.replay().bodies, this.shown?.run);
  }

  /** A session's profile: its own, or that of the run attached to its process. */
  private profileOf(session: vscode.DebugSession): SessionProfile | undefined {
    return this.sessions.get(this.attached.runOf(session)?.id ?? session.id);
  }

  /** The active session's profile if it has one, else the shown one. */
  private preferred(): SessionProfile | undefined {
    const active = vscode.debug.activeDebugSession;
    const st = active ? this.profileOf(active) : undefined;
    return st?.run ? st : this.shown;
  }

  async exportProfile(format?: unknown, st?: SessionProfile): Promise<vscode.Uri | undefined> {
    const target = st ?? this.preferred();
    if (!target?.run) {
      void vscode.window.showInformationMessage('There is no profile to export yet: start profiling a debug session first.');
      return undefined;
    }
    // The session has ended, and its daemon with it: dapprof converts the run's stream instead.
    if (target.ended) return exportEnded(target, this.dapprof, this.store, isExportFormat(format) ? format : undefined, this.hideDebugger);
    target.errorShownFor = undefined;
    return exportProfile({
      session: target.session,
      format: isExportFormat(format) ? format : undefined,
      hideDebugger: this.hideDebugger,
      errorShown: () => target.errorShownFor === 'exportProfile',
    });
  }

  // ---- events --------------------------------------------------------------------------------

  onCustomEvent(e: vscode.DebugSessionCustomEvent): void {
    if (e.event === 'debugpyAttach') void attachChild(e.session, e.body as Record<string, unknown>);
    else this.onEvent(e.session, e.event, e.body);
  }

  /** A profiling event of a debug session, or of a run the extension drives itself. */
  private onEvent(session: ProfiledSession, event: string, body: unknown): void {
    if (event === 'profilingData') this.onData(session, body as ProfilingDataBody);
    else if (event === 'profilingStopped') this.onStopped(session, body as ProfilingStoppedBody);
  }

  private onData(session: ProfiledSession, body: ProfilingDataBody): void {
    const st = this.sessions.get(session.id);
    if (!st?.stream || !body || !Array.isArray(body.samples)) return;
    if (st.status === 'idle') return; // a late event of a finished run
    st.stream.add(body);
    if (this.shown === st) {
      this.panel.post({ type: 'data', body });
      this.lineHeat.add(body);
    }
    this.status.updateStatusBar(this.sessions.values());
  }

  private onStopped(session: ProfiledSession, body: ProfilingStoppedBody): void {
    const st = this.sessions.get(session.id);
    if (!st || (st.status !== 'profiling' && st.status !== 'stopping' && st.status !== 'starting')) return;
    const { reason, message, ...summary } = body;
    this.finishRun(st, { summary, reason, message });
    if (reason === 'error') void vscode.window.showErrorMessage(`Profiling of "${session.name}" failed: ${message ?? 'sampling could not continue.'}`);
  }

  private finishRun(st: SessionProfile, stopped: StoppedInfo): void {
    st.status = 'idle';
    st.stopped = stopped;
    if (stopped.reason === 'error') st.error = stopped.message ?? 'Sampling failed.';
    this.summaries.write(st.session.name, stopped);
    // Kept beyond its session (and a reload): exportable, comparable, reopenable.
    if (st.run && st.stream)
      void this.store.save(st.run, st.stream.replay().bodies, stopped.summary).then(
        (kept) => (st.keptId = kept?.id),
        (e) => void vscode.window.showWarningMessage(`dapprof could not keep the run of "${st.session.name}": ${errorMessage(e)}`),
      );
    if (this.shown === st) this.panel.post({ type: 'stopped', stopped });
    this.update();
  }

  private onSessionTerminated(session: ProfiledSession): void {
    const st = this.sessions.get(session.id);
    if (!st) return;
    st.ended = true;
    if (st.status !== 'idle') this.finishRun(st, { summary: localSummary(st), reason: 'disconnected', message: 'The debug session ended.' });
    // The panel may go on showing it; the store keeps it beyond that (finishRun).
    this.sessions.delete(session.id);
    this.update();
  }

  /** *dapprof: Open a Kept Run…*: a run kept in the workspace's storage, shown in the panel as a stopped run. */
  async openKeptRun(): Promise<boolean> {
    const st = await openKeptRun(this.store);
    if (!st) return false;
    this.showFlameGraph(st);
    this.update();
    return true;
  }

  private onActiveSessionChanged(): void {
    const active = vscode.debug.activeDebugSession;
    const st = active ? this.profileOf(active) : undefined;
    if (st?.stream && st !== this.shown) {
      this.shown = st;
      this.loadHeat();
      this.sendReplay();
    }
    this.update();
  }

  /** The shown run as the panel needs it when it did not see it: its stream so far and state. */
  private sendReplay(): void {
    const st = this.shown;
    if (!st?.stream || !st.run) {
      this.panel.post({ type: 'idle', message: 'Start profiling from the debug toolbar to see a live flame graph.' });
      return;
    }
    // The page starts a replayed run on all threads.
    this.lineHeat.setView({ thread: undefined });
    const finished = st.status === 'idle';
    this.panel.post({ type: 'replay', run: st.run, ...st.stream.replay(), stopped: finished ? st.stopped : undefined, error: st.error });
  }
}
