// The status bar item of a run in progress and the context keys of the debug toolbar buttons
// and the Export command, both derived from the sessions' state on every change.

import * as vscode from 'vscode';
import type { AttachedState } from './attached';
import type { SessionProfile } from './session';

export const CONTEXT_CAN_START = 'dapprof.canStartProfiling';
export const CONTEXT_CAN_STOP = 'dapprof.canStopProfiling';
export const CONTEXT_HAS_PROFILE = 'dapprof.hasProfile';
/** The active session talks to dapprof: the asyncio Tasks view and its commands apply. */
export const CONTEXT_ASYNC_TASKS = 'dapprof.asyncTasksAvailable';

const nf = new Intl.NumberFormat('en-US');

export class StatusView implements vscode.Disposable {
  readonly statusBar: vscode.StatusBarItem;
  private readonly contexts = new Map<string, boolean>();

  constructor() {
    this.statusBar = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
    this.statusBar.command = 'dapprof.showFlameGraph';
  }

  dispose(): void {
    this.statusBar.dispose();
  }

  private setContext(key: string, value: boolean): void {
    if (this.contexts.get(key) === value) return;
    this.contexts.set(key, value);
    void vscode.commands.executeCommand('setContext', key, value);
  }

  /**
   * `live`: the sessions still running; `attached`: the active session's run attached to its
   * process, when its adapter is not dapprof (attached.ts).
   */
  updateContext(live: Iterable<SessionProfile>, attached: AttachedState = 'none', shownHasRun = false): void {
    const active = vscode.debug.activeDebugSession;
    const all = [...live];
    const st = all.find((s) => s.session.id === active?.id);
    const own = !!st && st.supportsProfiling;
    this.setContext(CONTEXT_CAN_START, own ? st.status === 'idle' : attached === 'idle');
    this.setContext(CONTEXT_CAN_STOP, own ? st.status === 'profiling' : attached === 'profiling');
    this.setContext(CONTEXT_ASYNC_TASKS, !!st && st.supportsProfiling);
    // The daemon keeps a session's last run for export until the next start, and only while the
    // session lasts: a live session that started a run has a profile.
    this.setContext(CONTEXT_HAS_PROFILE, shownHasRun || all.some((s) => s.run !== undefined));
  }

  updateStatusBar(live: Iterable<SessionProfile>): void {
    const profiling = [...live].filter((s) => s.status === 'profiling' || s.status === 'stopping');
    if (profiling.length === 0) {
      this.statusBar.hide();
      return;
    }
    const active = vscode.debug.activeDebugSession;
    const st = profiling.find((s) => s.session.id === active?.id) ?? profiling[0];
    // The batches' own counts, whether or not line heat aggregates the run.
    const t = st.stream?.totals ?? { sampleCount: 0, duration: 0, droppedSampleCount: 0 };
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
