// Start Profiling in a debug session whose adapter is not dapprof (a `debugpy` session): the
// extension runs a real profile-only dapprof attached to the process the session announced, and
// its stream reaches the same panel and status bar. VS Code is stubbed (test/support/fake-vscode.ts:
// no extension host runs here), and so is the debugpy session's adapter: the test sends the
// `process` event it would. dapprof and the Python process it samples are real.
import { fake, makeSession, resetFake, settle, Uri } from '../support/fake-vscode';
import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import { CONTEXT_CAN_START, CONTEXT_CAN_STOP, ProfilingController } from '../../src/extension/controller';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { clientRoot, repoRoot } from '../support/reference';

const DAPPROF = process.env.DAPPROF_BIN ?? join(repoRoot, 'build/default/src/dapprof');
const skip = existsSync(DAPPROF) ? false : `no dapprof at ${DAPPROF} (build it, or set DAPPROF_BIN)`;
const BUSY = join(clientRoot, 'test/e2e/fixture/busy.py');

let controller: ProfilingController | undefined;
const programs: ChildProcess[] = [];
afterEach(() => {
  controller?.dispose();
  controller = undefined;
  for (const p of programs.splice(0)) p.kill('SIGKILL');
});

/** A Python program that computes until killed (busy.py waits for a flag that never appears). */
function busy(): ChildProcess {
  const p = spawn('/usr/bin/python3', [BUSY, '/nonexistent/flag'], { stdio: 'ignore' });
  programs.push(p);
  return p;
}

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A debugpy session announcing its debuggee, as debugpy's adapter does after launch. */
function debugpySession(id: string, pid: number, parent?: ReturnType<typeof makeSession>) {
  const s = Object.assign(makeSession(id, 'debugpy', `app ${id}`), parent ? { parentSession: parent } : {});
  const process = { seq: 7, type: 'event', event: 'process', body: { systemProcessId: pid, name: 'app.py', startMethod: 'launch', isLocalProcess: true } };
  for (const [type, f] of fake.trackerFactories) if (type === '*' || type === 'debugpy') f.createDebugAdapterTracker(s)?.onDidSendMessage?.(process);
  fake.activeDebugSession = s;
  fake.onActiveChanged.fire(s);
  return s;
}

function samples(bodies: unknown[]): number {
  return (bodies as Array<{ type: string; body?: ProfilingDataBody }>).filter((m) => m.type === 'data').reduce((n, m) => n + m.body!.samples.length + (m.body!.stackCounts ?? []).reduce((a, b) => a + b, 0), 0);
}

test("a debugpy session's process is profiled by a dapprof attached to it; the run ends with the session, the process runs on", { skip }, async () => {
  resetFake();
  fake.config = { 'dapprof.profiling.rate': 200 };
  controller = new ProfilingController(Uri.file('/ext') as never, async () => DAPPROF);
  const program = busy();
  const s = debugpySession('d1', program.pid!);
  // Offered although debugpy's adapter knows nothing of profiling; no request goes to it.
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), true);
  assert.equal(await controller.startProfiling(s as never), true);
  assert.equal(s.requests.length, 0, 'nothing is asked of the debug adapter');
  assert.equal(fake.contexts.get(CONTEXT_CAN_STOP), true);
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), false);
  const run = controller.shown!;
  assert.equal(run.run?.path, 'attached');
  assert.equal(run.run?.pid, program.pid);
  assert.match(run.session.name, new RegExp(`app d1 \\(process ${program.pid}\\)`));
  const panel = fake.panels[0];
  panel.receive({ type: 'ready', hideDebugger: true });
  await until('samples of busy.py in the panel', () => samples(panel.posted) > 20);
  const names = new Set(panel.posted.flatMap((m) => Object.values((m as { body?: ProfilingDataBody }).body?.newFrames ?? {}).map((f) => f.function)));
  assert.ok(names.has('crunch') && names.has('spin'), [...names].join(' '));
  assert.match(fake.statusBar.text, /samples · 200 Hz/);

  // Stop Profiling on the debugpy session stops the run; dapprof stays attached: Start again runs another.
  assert.equal(await controller.stopProfiling(s as never), true);
  assert.equal(run.status, 'idle');
  assert.ok((run.stopped?.summary.sampleCount ?? 0) > 20);
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), true);
  assert.equal(await controller.startProfiling(s as never), true);
  assert.equal(controller.shown, run, 'the same run session, a new run');

  // The debug session ends: the run is stopped with its summary, dapprof detaches, the process runs on.
  fake.onTerminate.fire(s);
  await until('the run to end', () => !controller!.sessions.has(run.session.id));
  assert.equal(run.stopped?.reason, 'stopProfiling');
  await settle();
  assert.equal(program.exitCode, null, 'the process still runs');
});

test('a child session of a session being profiled is profiled too; a pid dapprof cannot attach to says why', { skip }, async () => {
  resetFake();
  controller = new ProfilingController(Uri.file('/ext') as never, async () => DAPPROF);
  const parent = debugpySession('p', busy().pid!);
  assert.equal(await controller.startProfiling(parent as never), true);
  const child = debugpySession('c', busy().pid!, parent);
  await until('the child run', () => [...controller!.sessions.values()].filter((st) => st.status === 'profiling').length === 2);
  assert.ok([...controller.sessions.values()].some((st) => st.run?.pid === child.configuration.processId || st.session.name.startsWith('app c ')));

  // A process that is not Python: dapprof refuses, the extension shows its reason.
  const sleeper = spawn('/bin/sleep', ['30'], { stdio: 'ignore' });
  programs.push(sleeper);
  const other = debugpySession('o', sleeper.pid!);
  assert.equal(await controller.startProfiling(other as never), false);
  assert.match(fake.errors.at(-1) ?? '', new RegExp(`Could not profile "app o" \\(process ${sleeper.pid}\\): .*`));
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), true, 'it can be tried again');
});
