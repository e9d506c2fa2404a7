// A profiling run that is not a VS Code debug session: the extension runs `dapprof stdio
// --profile-only` itself and talks DAP to it (dap-client.ts). Used to profile the process of a
// debug session whose adapter is not dapprof (debugpy's, the Python extension's): a second debug
// session would take the focus, show in the Call Stack and put Pause and Step buttons in the
// debug toolbar that a profiler cannot honour. The run looks to the controller like a session
// (ProfiledSession): the same start, stop, export and stream as any other.

import * as vscode from 'vscode';
import { DapClient } from './dap-client';
import { PROFILE_ONLY_ARGS } from './profile-only';
import type { ProfiledSession } from './session';

export const RUN_TYPE = 'dapprof-run';

export interface ProfileRunEvents {
  /** An event of the adapter (profilingData, profilingStopped, process, output...). */
  event(run: ProfileRun, event: string, body: unknown): void;
  /** The run ended: the process exited or was detached from, or dapprof ended. */
  ended(run: ProfileRun, reason: string): void;
}

let nextId = 1;

export class ProfileRun implements ProfiledSession {
  readonly id = `${RUN_TYPE}-${nextId++}`;
  readonly type = RUN_TYPE;
  /** The adapter said supportsProfilingStacks. */
  supportsStacks = false;
  private ended = false;
  private stopping: Promise<void> | undefined;
  private readonly client: DapClient;
  private initialized!: () => void;
  private readonly initializedEvent = new Promise<void>((resolve) => (this.initialized = resolve));

  private constructor(
    exe: string,
    readonly name: string,
    readonly workspaceFolder: vscode.WorkspaceFolder | undefined,
    readonly configuration: vscode.DebugConfiguration,
    private readonly events: ProfileRunEvents,
  ) {
    this.client = new DapClient(exe, PROFILE_ONLY_ARGS, (event, body) => this.onEvent(event, body), (reason) => this.end(reason));
  }

  /** Runs dapprof and attaches it to `processId`; rejects with dapprof's reason when it cannot. */
  static attach(exe: string, name: string, folder: vscode.WorkspaceFolder | undefined, processId: number, events: ProfileRunEvents): Promise<ProfileRun> {
    return ProfileRun.start(exe, folder, { type: RUN_TYPE, request: 'attach', name, processId }, events);
  }

  /**
   * Runs dapprof and has it start (`request: "launch"`, with `program` or `module`, `args`, `cwd`,
   * `python`, `env`) or find (`"attach"`, `processId`) the process, as a profile-only session's
   * configuration says (docs/PROFILING.md); rejects with dapprof's reason when it cannot.
   */
  static async start(exe: string, folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration, events: ProfileRunEvents): Promise<ProfileRun> {
    const run = new ProfileRun(exe, config.name, folder, config, events);
    try {
      const caps = (await run.client.request('initialize', {
        clientID: 'dapprof-vscode',
        adapterID: RUN_TYPE,
        pathFormat: 'path',
        linesStartAt1: true,
        columnsStartAt1: true,
      })) as { supportsProfilingStacks?: boolean } | undefined;
      run.supportsStacks = caps?.supportsProfilingStacks === true;
      await run.initializedEvent;
      const { type: _type, request, name: _name, ...args } = config;
      await run.client.request(request === 'launch' ? 'launch' : 'attach', args);
      await run.client.request('configurationDone');
    } catch (e) {
      run.client.kill();
      throw e;
    }
    return run;
  }

  get isLaunch(): boolean {
    return this.configuration.request === 'launch';
  }

  get isEnded(): boolean {
    return this.ended;
  }

  customRequest(command: string, args?: unknown): Thenable<unknown> {
    return this.client.request(command, args);
  }

  /** Detaches (the process goes on running) or, for a program dapprof launched, ends it; and ends dapprof. */
  stop(): Promise<void> {
    this.stopping ??= this.ended ? Promise.resolve() : this.detach();
    return this.stopping;
  }

  private async detach(): Promise<void> {
    // dapprof answers once a launched program has ended (SIGTERM, then SIGKILL after 3 s).
    await Promise.race([this.client.request('disconnect', {}).catch(() => undefined), new Promise((r) => setTimeout(r, 5000))]);
    this.client.kill();
    this.end('stopped');
  }

  private onEvent(event: string, body: unknown): void {
    if (event === 'initialized') this.initialized();
    this.events.event(this, event, body);
    // The process exited: dapprof has sent the run's last batch and profilingStopped before this.
    if (event === 'terminated') void this.stop();
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.initialized(); // an attach still waiting for it fails at once (the client has ended)
    this.events.ended(this, reason);
  }
}
