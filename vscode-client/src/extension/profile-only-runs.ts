// Profile-only runs (dapprof: Profile Process…, Profile Python File, a `dapprof-profile` launch
// configuration) are not VS Code debug sessions. VS Code's debug toolbar shows Pause and Step
// Over, Into and Out for every session, only disabled or enabled by its state (its
// debugToolBar registers them without a `when` that a debug type or a capability could turn
// off); a profiler that cannot pause or step would offer controls that answer an error. So the
// extension runs dapprof itself (profile-run.ts) and gives the run controls that all work, in the
// status bar beside its sample count: Stop (sampling, and the program if dapprof launched it) and
// Restart (the same configuration again). The program's output goes to an output channel.

import * as vscode from 'vscode';
import { ProfileRun } from './profile-run';
import { errorMessage, type ProfiledSession } from './session';

export interface ProfileOnlyHost {
  /** A run's adapter is ready: a session that supports profiling, of the given path. */
  addRun(run: ProfileRun, path: 'profile-only'): void;
  startProfiling(session: ProfiledSession): Promise<boolean>;
  stopProfiling(session: ProfiledSession): Promise<boolean>;
  isProfiling(session: ProfiledSession): boolean;
  runEvent(run: ProfileRun, event: string, body: unknown): void;
  runEnded(run: ProfileRun): void;
  /** Shows the run's flame graph, whatever dapprof.profiling.openFlameGraph says: the run exists to be seen. */
  showFlameGraph(run: ProfileRun): void;
}

export const STOP_RUN = 'dapprof.stopRun';
export const RESTART_RUN = 'dapprof.restartRun';

interface Started {
  run: ProfileRun;
  config: vscode.DebugConfiguration;
  folder: vscode.WorkspaceFolder | undefined;
}

export class ProfileOnlyRuns implements vscode.Disposable {
  /** The live runs, newest last: the controls act on the newest. */
  private readonly live: Started[] = [];
  private readonly stopItem: vscode.StatusBarItem;
  private readonly restartItem: vscode.StatusBarItem;
  private output: vscode.OutputChannel | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly host: ProfileOnlyHost,
    private readonly dapprof: (folder: vscode.WorkspaceFolder | undefined) => Promise<string>,
  ) {
    // Just right of the sample count (status.ts, priority 50).
    this.stopItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 49);
    this.stopItem.command = STOP_RUN;
    this.stopItem.text = '$(debug-stop) Stop';
    this.restartItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 48);
    this.restartItem.command = RESTART_RUN;
    this.restartItem.text = '$(debug-restart) Restart';
    this.disposables.push(
      this.stopItem,
      this.restartItem,
      vscode.commands.registerCommand(STOP_RUN, () => this.stop()),
      vscode.commands.registerCommand(RESTART_RUN, () => this.restart()),
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.output?.dispose();
    for (const s of this.live.splice(0)) void s.run.stop();
  }

  /** Starts dapprof on a `dapprof-profile` configuration (launch or attach) and profiles the process. */
  async start(config: vscode.DebugConfiguration, folder: vscode.WorkspaceFolder | undefined): Promise<boolean> {
    let run: ProfileRun;
    try {
      run = await ProfileRun.start(await this.dapprof(folder), folder, config, {
        event: (r, event, body) => this.onEvent(r, event, body),
        ended: (r) => this.onEnded(r),
      });
    } catch (e) {
      void vscode.window.showErrorMessage(`Could not start "${config.name}": ${errorMessage(e)}`);
      return false;
    }
    this.live.push({ run, config, folder });
    this.host.addRun(run, 'profile-only');
    this.showControls();
    const ok = await this.host.startProfiling(run);
    if (ok) this.host.showFlameGraph(run);
    return ok;
  }

  /** Stops the newest run: its sampling (the summary shown), and the program if dapprof launched it, else detaches. */
  async stop(): Promise<boolean> {
    const s = this.live.at(-1);
    if (!s) return false;
    if (this.host.isProfiling(s.run)) await this.host.stopProfiling(s.run);
    await s.run.stop();
    return true;
  }

  /** Stops the newest run and starts its configuration again. */
  async restart(): Promise<boolean> {
    const s = this.live.at(-1);
    if (!s) return false;
    await this.stop();
    return this.start(s.config, s.folder);
  }

  private onEvent(run: ProfileRun, event: string, body: unknown): void {
    if (event === 'output') {
      const text = (body as { output?: unknown } | undefined)?.output;
      if (typeof text !== 'string') return;
      if (!this.output) {
        this.output = vscode.window.createOutputChannel('dapprof: profiled program');
        this.output.show(true);
      }
      this.output.append(text);
      return;
    }
    this.host.runEvent(run, event, body);
  }

  private onEnded(run: ProfileRun): void {
    const i = this.live.findIndex((s) => s.run === run);
    if (i >= 0) this.live.splice(i, 1);
    this.host.runEnded(run);
    this.showControls();
  }

  private showControls(): void {
    const s = this.live.at(-1);
    // The commands' palette entries follow the status bar's buttons.
    void vscode.commands.executeCommand('setContext', 'dapprof.profileOnlyRun', !!s);
    if (!s) {
      this.stopItem.hide();
      this.restartItem.hide();
      return;
    }
    const what = s.run.isLaunch ? `sampling and the program` : `sampling (the process runs on)`;
    this.stopItem.tooltip = `Stop "${s.run.name}": ${what}`;
    this.restartItem.tooltip = `Restart "${s.run.name}": stop it and run its configuration again`;
    this.stopItem.show();
    this.restartItem.show();
  }
}
