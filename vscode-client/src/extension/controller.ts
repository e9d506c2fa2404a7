// Profiling state of debug sessions: which sessions support profiling (their adapter answered
// `initialize` with supportsProfiling), start/stop requests, the profilingData stream, the status
// bar item, the context keys of the debug toolbar buttons, the flame graph panel and export.

import * as path from 'path';
import * as vscode from 'vscode';
import { toCpuProfile, toSpeedscope } from '../model/export';
import { ProfileModel } from '../model/profile';
import type {
  ProfilingDataBody,
  ProfilingStoppedBody,
  ProfilingSummary,
  StartProfilingArguments,
  StartProfilingResponseBody,
} from '../model/protocol';
import type { RunInfo, StoppedInfo } from '../webview/messages';
import { FlameGraphPanel } from './panel';

export type ProfilingStatus = 'idle' | 'starting' | 'profiling' | 'stopping';

export interface SessionProfile {
  session: vscode.DebugSession;
  supportsProfiling: boolean;
  status: ProfilingStatus;
  ended: boolean;
  /** The current or last run; undefined before the first start. */
  run?: RunInfo;
  model?: ProfileModel;
  stopped?: StoppedInfo;
  error?: string;
  sampleIntervalMs?: number;
  /**
   * The profiling request whose error response VS Code has already shown to the user: it does so
   * itself for DAP errors marked showUser, as dapprof marks them. The extension then does not
   * show the same message a second time.
   */
  errorShownFor?: 'startProfiling' | 'stopProfiling';
}

interface AdapterMessage {
  type?: string;
  command?: string;
  success?: boolean;
  body?: { supportsProfiling?: boolean; error?: { showUser?: boolean } };
}

export const CONTEXT_CAN_START = 'dapprof.canStartProfiling';
export const CONTEXT_CAN_STOP = 'dapprof.canStopProfiling';
export const CONTEXT_HAS_PROFILE = 'dapprof.hasProfile';

/** Keeps this many ended sessions' profiles for the panel and export. */
const ENDED_KEPT = 5;

const nf = new Intl.NumberFormat('en-US');

export function startArgumentsFromSettings(cfg: vscode.WorkspaceConfiguration): StartProfilingArguments {
  const args: StartProfilingArguments = {
    rate: cfg.get<number>('rate', 100),
    native: cfg.get<boolean>('native', false),
    nonblocking: cfg.get<boolean>('nonblocking', false),
    idle: cfg.get<boolean>('idle', false),
    gil: cfg.get<boolean>('gil', false),
    subprocesses: cfg.get<boolean>('subprocesses', false),
    batchIntervalMs: cfg.get<number>('batchIntervalMs', 100),
  };
  return args;
}

function summaryText(s: ProfilingSummary): string {
  let t = `${nf.format(s.sampleCount)} samples in ${(s.duration / 1000).toFixed(1)} s`;
  if (s.errorCount) t += `, ${nf.format(s.errorCount)} read errors`;
  if (s.droppedSampleCount) t += `, ${nf.format(s.droppedSampleCount)} dropped`;
  return t;
}

export class ProfilingController implements vscode.Disposable {
  readonly sessions = new Map<string, SessionProfile>();
  private readonly ended: SessionProfile[] = [];
  /** The session whose profile the panel shows. */
  shown: SessionProfile | undefined;
  readonly statusBar: vscode.StatusBarItem;
  readonly panel: FlameGraphPanel;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly contexts = new Map<string, boolean>();

  constructor(readonly extensionUri: vscode.Uri) {
    this.statusBar = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
    this.statusBar.command = 'dapprof.showFlameGraph';
    this.panel = new FlameGraphPanel(extensionUri, {
      onReady: () => this.sendSnapshot(),
      onOpenSource: (file, line) => void this.openSource(file, line),
    });
    const d = this.disposables;
    d.push(this.statusBar);
    d.push(
      vscode.debug.registerDebugAdapterTrackerFactory('*', {
        // The tracker sees the adapter's messages before VS Code handles them, so a failed
        // request's response is seen here before the request's promise rejects.
        createDebugAdapterTracker: (session) => ({
          onDidSendMessage: (m: AdapterMessage) => {
            if (m?.type !== 'response') return;
            if (m.command === 'initialize' && m.success && m.body?.supportsProfiling === true) this.markSupportsProfiling(session);
            else if ((m.command === 'startProfiling' || m.command === 'stopProfiling') && m.success === false && m.body?.error?.showUser === true)
              this.state(session).errorShownFor = m.command;
          },
        }),
      }),
    );
    d.push(vscode.debug.onDidReceiveDebugSessionCustomEvent((e) => this.onCustomEvent(e)));
    d.push(vscode.debug.onDidChangeActiveDebugSession(() => this.onActiveSessionChanged()));
    d.push(vscode.debug.onDidTerminateDebugSession((s) => this.onSessionTerminated(s)));
    d.push(
      vscode.commands.registerCommand('dapprof.startProfiling', (arg?: unknown) => this.startProfiling(this.sessionFromArg(arg))),
      vscode.commands.registerCommand('dapprof.stopProfiling', (arg?: unknown) => this.stopProfiling(this.sessionFromArg(arg))),
      vscode.commands.registerCommand('dapprof.showFlameGraph', () => this.showFlameGraph()),
      vscode.commands.registerCommand('dapprof.exportProfile', (format?: unknown) => this.exportProfile(format)),
    );
    this.updateContext();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.panel.dispose();
  }

  private state(session: vscode.DebugSession): SessionProfile {
    let s = this.sessions.get(session.id);
    if (!s) {
      s = { session, supportsProfiling: false, status: 'idle', ended: false };
      this.sessions.set(session.id, s);
    }
    return s;
  }

  /** The session a command applies to: its argument (a session or `{sessionId}`), else the active one. */
  private sessionFromArg(arg: unknown): vscode.DebugSession | undefined {
    const id =
      arg && typeof arg === 'object'
        ? (arg as { sessionId?: unknown }).sessionId ?? ((arg as { id?: unknown; customRequest?: unknown }).customRequest ? (arg as { id: unknown }).id : undefined)
        : undefined;
    if (typeof id === 'string') {
      const s = this.sessions.get(id);
      if (s) return s.session;
    }
    return vscode.debug.activeDebugSession;
  }

  markSupportsProfiling(session: vscode.DebugSession): void {
    this.state(session).supportsProfiling = true;
    this.updateContext();
  }

  // ---- commands ------------------------------------------------------------------------------

  async startProfiling(session: vscode.DebugSession | undefined): Promise<boolean> {
    if (!session) {
      void vscode.window.showErrorMessage('Cannot start profiling: there is no debug session. Start debugging a Python program first.');
      return false;
    }
    const st = this.state(session);
    if (!st.supportsProfiling) {
      void vscode.window.showErrorMessage(
        `Cannot start profiling: the debug adapter of "${session.name}" does not support profiling. Debug with the "dapprof" debug type, or point "debugServer" at "dapprof serve".`,
      );
      return false;
    }
    if (st.status !== 'idle') return false;
    st.status = 'starting';
    this.updateContext();
    const args = startArgumentsFromSettings(vscode.workspace.getConfiguration('dapprof.profiling', session.workspaceFolder));
    let resp: StartProfilingResponseBody;
    st.errorShownFor = undefined;
    try {
      resp = (await session.customRequest('startProfiling', args)) as StartProfilingResponseBody;
    } catch (e) {
      st.status = 'idle';
      this.updateContext();
      const message = e instanceof Error ? e.message : String(e);
      if (st.errorShownFor !== 'startProfiling') void vscode.window.showErrorMessage(`Could not start profiling "${session.name}": ${message}`);
      return false;
    }
    if (st.ended) return false; // the session ended while starting
    st.status = 'profiling';
    st.model = new ProfileModel();
    st.stopped = undefined;
    st.error = undefined;
    st.run = { session: session.name, pid: resp?.pid, pythonVersion: resp?.pythonVersion, rate: resp?.rate ?? args.rate };
    st.sampleIntervalMs = 1000 / (st.run.rate || 100);
    if (resp?.warning) void vscode.window.showWarningMessage(`dapprof: ${resp.warning}`);
    this.shown = st;
    if (vscode.workspace.getConfiguration('dapprof.profiling', session.workspaceFolder).get<boolean>('openFlameGraph', true))
      this.panel.show(true);
    this.panel.post({ type: 'run', run: st.run });
    this.updateContext();
    this.updateStatusBar();
    return true;
  }

  async stopProfiling(session: vscode.DebugSession | undefined): Promise<boolean> {
    if (!session) return false;
    const st = this.sessions.get(session.id);
    if (!st || st.status !== 'profiling') {
      void vscode.window.showInformationMessage('Profiling is not running in this debug session.');
      return false;
    }
    st.status = 'stopping';
    st.errorShownFor = undefined;
    this.updateContext();
    try {
      const summary = (await session.customRequest('stopProfiling', {})) as ProfilingSummary;
      this.finishRun(st, { summary, reason: 'stopProfiling' });
    } catch (e) {
      const err = e as Error & { id?: number };
      const message = err instanceof Error ? err.message : String(e);
      if (st.status !== 'stopping') return false; // a profilingStopped event ended the run meanwhile
      if (/not running|not profiling/i.test(message)) {
        this.finishRun(st, { summary: this.localSummary(st), reason: 'requested', message });
      } else {
        st.status = 'profiling';
        this.updateContext();
        if (st.errorShownFor !== 'stopProfiling') void vscode.window.showErrorMessage(`Could not stop profiling "${session.name}": ${message}`);
        return false;
      }
    }
    const s = st.stopped!.summary;
    void vscode.window
      .showInformationMessage(`Profiling stopped: ${summaryText(s)}.`, 'Show Flame Graph', 'Export…')
      .then((choice) => {
        if (choice === 'Show Flame Graph') this.showFlameGraph(st);
        else if (choice === 'Export…') void this.exportProfile(undefined, st);
      });
    return true;
  }

  showFlameGraph(st?: SessionProfile): void {
    const target = st ?? this.preferred();
    if (target && target !== this.shown) this.shown = target;
    if (this.panel.isOpen) this.sendSnapshot();
    this.panel.show(false);
  }

  /** The active session's profile if it has one, else the shown one. */
  private preferred(): SessionProfile | undefined {
    const active = vscode.debug.activeDebugSession;
    const st = active ? this.sessions.get(active.id) : undefined;
    return st?.model ? st : this.shown;
  }

  async exportProfile(format?: unknown, st?: SessionProfile): Promise<vscode.Uri | undefined> {
    const target = st ?? this.preferred();
    if (!target?.model || target.model.totals.sampleCount === 0) {
      void vscode.window.showInformationMessage('There is no profile to export yet: start profiling a debug session first.');
      return undefined;
    }
    let fmt = format === 'speedscope' || format === 'cpuprofile' ? format : undefined;
    if (!fmt) {
      const pick = await vscode.window.showQuickPick(
        [
          { label: 'speedscope', description: '.speedscope.json — opens in speedscope.app' },
          { label: 'cpuprofile', description: '.cpuprofile — Chrome DevTools and VS Code\'s profile viewer' },
        ],
        { placeHolder: 'Export the profile as' },
      );
      if (!pick) return undefined;
      fmt = pick.label as 'speedscope' | 'cpuprofile';
    }
    const ext = fmt === 'speedscope' ? '.speedscope.json' : '.cpuprofile';
    const base = (target.session.name || 'profile').replace(/[^\w.-]+/g, '_');
    const folder = target.session.workspaceFolder?.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
    const uri = await vscode.window.showSaveDialog({
      defaultUri: folder ? vscode.Uri.joinPath(folder, `${base}${ext}`) : undefined,
      filters: fmt === 'speedscope' ? { speedscope: ['json'] } : { 'CPU profile': ['cpuprofile'] },
      saveLabel: 'Export Profile',
    });
    if (!uri) return undefined;
    const opts = { sampleIntervalMs: target.sampleIntervalMs, name: target.session.name };
    const data = fmt === 'speedscope' ? toSpeedscope(target.model, opts) : toCpuProfile(target.model, opts);
    try {
      await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(JSON.stringify(data)));
    } catch (e) {
      void vscode.window.showErrorMessage(`Could not write the profile to ${uri.fsPath}: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
    await vscode.commands.executeCommand('vscode.open', uri);
    return uri;
  }

  // ---- events --------------------------------------------------------------------------------

  onCustomEvent(e: vscode.DebugSessionCustomEvent): void {
    if (e.event === 'profilingData') this.onData(e.session, e.body as ProfilingDataBody);
    else if (e.event === 'profilingStopped') this.onStopped(e.session, e.body as ProfilingStoppedBody);
    else if (e.event === 'debugpyAttach') void this.attachChild(e.session, e.body as Record<string, unknown>);
  }

  private onData(session: vscode.DebugSession, body: ProfilingDataBody): void {
    const st = this.sessions.get(session.id);
    if (!st || !st.model || !body || !Array.isArray(body.samples)) return;
    if (st.status === 'idle') return; // a late event of a finished run
    st.model.addBatch(body);
    if (this.shown === st) this.panel.post({ type: 'data', body });
    this.updateStatusBar();
    if (st.model.totals.batches === 1) this.updateContext();
  }

  private onStopped(session: vscode.DebugSession, body: ProfilingStoppedBody): void {
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
    if (this.shown === st) this.panel.post({ type: 'stopped', stopped });
    this.updateContext();
    this.updateStatusBar();
  }

  private localSummary(st: SessionProfile): ProfilingSummary {
    const t = st.model?.totals;
    return { sampleCount: t?.sampleCount ?? 0, duration: t?.duration ?? 0, errorCount: t?.errorCount ?? 0, droppedSampleCount: t?.droppedSampleCount ?? 0 };
  }

  private onSessionTerminated(session: vscode.DebugSession): void {
    const st = this.sessions.get(session.id);
    if (!st) return;
    st.ended = true;
    if (st.status !== 'idle') this.finishRun(st, { summary: this.localSummary(st), reason: 'disconnected', message: 'The debug session ended.' });
    this.sessions.delete(session.id);
    if (st.model) {
      this.ended.push(st);
      // Keep the newest ended profiles, and the shown one however old.
      while (this.ended.length > ENDED_KEPT) {
        const i = this.ended.findIndex((e) => e !== this.shown);
        this.ended.splice(i, 1);
      }
    }
    this.updateContext();
  }

  private onActiveSessionChanged(): void {
    const active = vscode.debug.activeDebugSession;
    const st = active ? this.sessions.get(active.id) : undefined;
    if (st?.model && st !== this.shown) {
      this.shown = st;
      this.sendSnapshot();
    }
    this.updateContext();
    this.updateStatusBar();
  }

  /** debugpy announced a child process: debug it through dapprof too, as a child session. */
  async attachChild(parent: vscode.DebugSession, body: Record<string, unknown>): Promise<boolean> {
    if (parent.type !== 'dapprof' || !body || typeof body !== 'object') return false; // other types: their own extension attaches
    const config: vscode.DebugConfiguration = {
      ...body,
      type: 'dapprof',
      request: 'attach',
      name: typeof body.name === 'string' && body.name ? body.name : `Subprocess ${String(body.subProcessId ?? '')}`.trim(),
    };
    try {
      const ok = await vscode.debug.startDebugging(parent.workspaceFolder, config, { parentSession: parent, lifecycleManagedByParent: true });
      if (!ok) void vscode.window.showWarningMessage(`Could not attach to the child process "${config.name}".`);
      return ok;
    } catch (e) {
      void vscode.window.showWarningMessage(`Could not attach to the child process "${config.name}": ${e instanceof Error ? e.message : String(e)}`);
      return false;
    }
  }

  // ---- UI ------------------------------------------------------------------------------------

  private sendSnapshot(): void {
    const st = this.shown;
    if (!st?.model || !st.run) {
      this.panel.post({ type: 'idle', message: 'Start profiling from the debug toolbar to see a live flame graph.' });
      return;
    }
    if (st.status !== 'idle' && st.model.totals.batches === 0) {
      this.panel.post({ type: 'run', run: st.run });
      return;
    }
    this.panel.post({ type: 'snapshot', run: st.run, snapshot: st.model.snapshot(), stopped: st.status === 'idle' ? st.stopped : undefined, error: st.error });
  }

  async openSource(file: string, line: number): Promise<void> {
    const st = this.shown;
    const candidates: string[] = [];
    if (path.isAbsolute(file)) candidates.push(file);
    else {
      const cwd = st?.session.configuration?.cwd;
      if (typeof cwd === 'string' && cwd) candidates.push(path.resolve(cwd.replace('${workspaceFolder}', st?.session.workspaceFolder?.uri.fsPath ?? ''), file));
      for (const f of vscode.workspace.workspaceFolders ?? []) candidates.push(path.join(f.uri.fsPath, file));
    }
    for (const c of candidates) {
      const uri = vscode.Uri.file(c);
      try {
        await vscode.workspace.fs.stat(uri);
      } catch {
        continue;
      }
      const pos = new vscode.Position(Math.max(0, line - 1), 0);
      await vscode.window.showTextDocument(uri, { viewColumn: vscode.ViewColumn.One, selection: new vscode.Range(pos, pos), preview: true });
      return;
    }
    void vscode.window.showWarningMessage(`Cannot open ${file}: the file was not found${candidates.length ? '' : ' (a relative path, and no workspace folder is open)'}.`);
  }

  private setContext(key: string, value: boolean): void {
    if (this.contexts.get(key) === value) return;
    this.contexts.set(key, value);
    void vscode.commands.executeCommand('setContext', key, value);
  }

  updateContext(): void {
    const active = vscode.debug.activeDebugSession;
    const st = active ? this.sessions.get(active.id) : undefined;
    this.setContext(CONTEXT_CAN_START, !!st && st.supportsProfiling && st.status === 'idle');
    this.setContext(CONTEXT_CAN_STOP, !!st && st.status === 'profiling');
    const any = [...this.sessions.values(), ...this.ended].some((s) => s.model && s.model.totals.sampleCount > 0);
    this.setContext(CONTEXT_HAS_PROFILE, any);
  }

  updateStatusBar(): void {
    const profiling = [...this.sessions.values()].filter((s) => s.status === 'profiling' || s.status === 'stopping');
    if (profiling.length === 0) {
      this.statusBar.hide();
      return;
    }
    const active = vscode.debug.activeDebugSession;
    const st = profiling.find((s) => s.session.id === active?.id) ?? profiling[0];
    const t = st.model!.totals;
    const measured = t.duration > 0 ? (t.sampleCount * 1000) / t.duration : 0;
    this.statusBar.text = `$(flame) ${nf.format(t.sampleCount)} samples · ${st.run?.rate ?? '?'} Hz`;
    const who = [st.run?.pid ? `process ${st.run.pid}` : '', st.run?.pythonVersion ? `Python ${st.run.pythonVersion}` : ''].filter(Boolean).join(', ');
    this.statusBar.tooltip =
      `Profiling "${st.session.name}"${who ? ` (${who})` : ''}: ${nf.format(t.sampleCount)} samples in ${(t.duration / 1000).toFixed(1)} s ` +
      `(${measured.toFixed(0)} samples/s at ${st.run?.rate ?? '?'} Hz)` +
      (t.droppedSampleCount ? `, ${nf.format(t.droppedSampleCount)} dropped` : '') +
      (profiling.length > 1 ? `; ${profiling.length} sessions profiling` : '') +
      '. Click to show the flame graph.';
    this.statusBar.show();
  }
}
