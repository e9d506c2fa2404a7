// Session and profiling state handling of the extension, with the VS Code API stubbed: a real
// extension host cannot run here (see test/support/fake-vscode.ts). The stub records what the
// extension asks of VS Code; the debug adapter's answers are scripted per test.
import { DebugAdapterServer, fake, makeSession, resetFake, settle, startSession, Uri, vscodeStub } from '../support/fake-vscode';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeEach, test } from 'node:test';
import { bundledExecutable, DapprofAdapterFactory, DapprofConfigurationProvider, findExecutable } from '../../src/extension/adapter';
import { checkDapprof } from '../../src/extension/executable';
import { CONTEXT_CAN_START, CONTEXT_CAN_STOP, CONTEXT_HAS_PROFILE, ProfilingController } from '../../src/extension/controller';
import { activate } from '../../src/extension/extension';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { clientRoot, readStream, toStacks } from '../support/reference';

const START_RESPONSE = { pid: 4242, pythonVersion: '3.12.1', rate: 250, native: false, nonblocking: false, idle: false, gil: false, subprocesses: false, batchIntervalMs: 100 };

let controller: ProfilingController;
beforeEach(() => {
  controller?.dispose();
  resetFake();
  controller = new ProfilingController(Uri.file('/ext') as never);
});

function adapterAnswers(s: ReturnType<typeof makeSession>) {
  s.answer = (command) => {
    if (command === 'startProfiling') return START_RESPONSE;
    if (command === 'stopProfiling') return { sampleCount: 5, duration: 200, errorCount: 1, droppedSampleCount: 0 };
    throw new Error(`unexpected ${command}`);
  };
}

const DATA = readStream('synthetic-stream.jsonl');

test('profiling is offered only to sessions whose adapter answers initialize with supportsProfiling', async () => {
  const plain = makeSession('plain', 'debugpy');
  startSession(plain, false);
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), false);
  assert.equal(fake.contexts.get(CONTEXT_CAN_STOP), false);
  assert.equal(await controller.startProfiling(plain as never), false);
  assert.equal(plain.requests.length, 0, 'no request is sent to an adapter without the capability');
  assert.match(fake.errors[0], /does not support profiling/);

  // A debugpy configuration pointed at `dapprof serve` (debugServer) supports it: any session type.
  const viaServer = makeSession('server', 'debugpy');
  startSession(viaServer, true);
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), true);
  // Switching back to the plain session hides the button again.
  fake.activeDebugSession = plain;
  fake.onActiveChanged.fire(plain);
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), false);
});

test('an adapter that supports stacks is asked for them; the panel shows the same profile', async () => {
  const s = makeSession('st');
  adapterAnswers(s);
  startSession(s, true, true);
  await fake.commands.get('dapprof.startProfiling')!();
  assert.deepEqual(s.requests[0], ['startProfiling', { rate: 100, native: false, nonblocking: false, idle: false, gil: false, subprocesses: false, batchIntervalMs: 100, async: 'off', stacks: true }]);
  const panel = fake.panels[0];
  panel.receive({ type: 'ready', hideDebugger: false });
  const compact = toStacks(DATA);
  for (const body of compact) fake.onCustomEvent.fire({ session: s, event: 'profilingData', body });
  const samples = DATA.reduce((a, b) => a + b.samples.length, 0);
  assert.equal(fake.statusBar.text, `$(flame) ${samples.toLocaleString("en-US")} samples · 250 Hz`);
  const forwarded = panel.posted.filter((m) => (m as { type: string }).type === 'data').map((m) => (m as { body: ProfilingDataBody }).body);
  assert.deepEqual(forwarded, compact, 'the bodies go to the panel as received');
});

test('start sends the settings, shows the panel and status bar; data updates them; stop shows the summary', async () => {
  fake.config = { 'dapprof.profiling.rate': 250, 'dapprof.profiling.idle': true, 'dapprof.profiling.batchIntervalMs': 50, 'dapprof.profiling.async': 'all' };
  const s = makeSession('a');
  adapterAnswers(s);
  startSession(s, true);
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), true);

  await fake.commands.get('dapprof.startProfiling')!();
  assert.deepEqual(s.requests[0], ['startProfiling', { rate: 250, native: false, nonblocking: false, idle: true, gil: false, subprocesses: false, batchIntervalMs: 50, async: 'all' }]);
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), false);
  assert.equal(fake.contexts.get(CONTEXT_CAN_STOP), true);
  assert.equal(fake.statusBar.visible, true);
  assert.equal(fake.statusBar.text, '$(flame) 0 samples · 250 Hz');
  assert.equal(fake.panels.length, 1, 'the flame graph opens');
  const panel = fake.panels[0];
  assert.match(panel.html, /Content-Security-Policy/);
  assert.match(panel.html, /dist\/webview\.js/);
  panel.receive({ type: 'ready', hideDebugger: true });
  // Nothing received yet: the replay of the run is empty.
  assert.deepEqual(panel.posted.at(-1), { type: 'replay', run: { session: 'session a', pid: 4242, pythonVersion: '3.12.1', rate: 250, path: 'proxy' }, bodies: [], omittedSamples: 0 });

  for (const body of DATA.slice(0, 3)) fake.onCustomEvent.fire({ session: s, event: 'profilingData', body });
  const n = DATA.slice(0, 3).reduce((a, b) => a + b.sampleCount, 0);
  assert.equal(fake.statusBar.text, `$(flame) ${n} samples · 250 Hz`);
  assert.match(fake.statusBar.tooltip, /process 4242, Python 3\.12\.1/);
  assert.equal(panel.posted.filter((m) => (m as { type: string }).type === 'data').length, 3);
  assert.equal(fake.contexts.get(CONTEXT_HAS_PROFILE), true);

  await fake.commands.get('dapprof.stopProfiling')!();
  assert.deepEqual(s.requests[1], ['stopProfiling', { hideDebugger: true }], 'the summary leaves out what the panel hides');
  assert.equal(fake.contexts.get(CONTEXT_CAN_STOP), false);
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), true, 'profiling can start again');
  assert.equal(fake.statusBar.visible, false);
  assert.deepEqual(panel.posted.at(-1), { type: 'stopped', stopped: { summary: { sampleCount: 5, duration: 200, errorCount: 1, droppedSampleCount: 0 }, reason: 'stopProfiling' } });
  assert.match(fake.infos.at(-1)!, /^Profiling stopped: 5 samples in 0\.2 s, 1 read errors\.$/);
  assert.deepEqual(fake.infoChoices.at(-1), ['Show Flame Graph', 'Export…'], 'no top functions from the daemon: no summary to show');
  // A late event after the run ended is ignored.
  fake.onCustomEvent.fire({ session: s, event: 'profilingData', body: DATA[3] });
  assert.equal(panel.posted.filter((m) => (m as { type: string }).type === 'data').length, 3);
});

test("the sampling by task in effect is the response's: the panel's run carries it", async () => {
  fake.config = { 'dapprof.profiling.async': 'running' };
  const s = makeSession('a');
  // The daemon answers with what it does (here more than asked, to tell the two apart).
  s.answer = (command) => (command === 'startProfiling' ? { ...START_RESPONSE, async: 'all' } : {});
  startSession(s, true);
  await fake.commands.get('dapprof.startProfiling')!();
  assert.equal((s.requests[0][1] as { async: string }).async, 'running');
  const panel = fake.panels[0];
  panel.receive({ type: 'ready', hideDebugger: true });
  assert.deepEqual(panel.posted.at(-1), { type: 'replay', run: { session: 'session a', pid: 4242, pythonVersion: '3.12.1', rate: 250, async: 'all', path: 'proxy' }, bodies: [], omittedSamples: 0 });
});

test("profileProcessId of an attach configuration (a container behind a port forwarder) goes to startProfiling as processId", async () => {
  const s = makeSession('c');
  s.configuration = { type: 'dapprof', request: 'attach', name: 'container', connect: { host: '127.0.0.1', port: 5678 }, profileProcessId: '31337' };
  adapterAnswers(s);
  startSession(s, true);
  assert.equal(await controller.startProfiling(s as never), true);
  assert.equal((s.requests[0][1] as { processId?: number }).processId, 31337, "the picked ID (a string, as ${command:dapprof.pickProcess} gives it) as a number");
  await controller.stopProfiling(s as never);

  // Not a process ID: said before anything is asked of the adapter, and profiling stays startable.
  for (const bad of ['web-1', 0, -3, 2.5]) {
    const b = makeSession(`bad ${bad}`);
    b.configuration = { type: 'dapprof', request: 'attach', name: 'container', profileProcessId: bad };
    adapterAnswers(b);
    startSession(b, true);
    fake.errors.length = 0;
    assert.equal(await controller.startProfiling(b as never), false);
    assert.deepEqual(b.requests, []);
    assert.equal(fake.errors[0], `Cannot start profiling "session bad ${bad}": "profileProcessId" of the launch configuration must be a process ID of this machine (a positive integer), not ${JSON.stringify(bad)}.`);
    assert.equal(fake.contexts.get(CONTEXT_CAN_START), true);
  }
});

test('a sampling mode setting is sent by name, in place of the older idle and gil settings', async () => {
  fake.config = { 'dapprof.profiling.mode': 'exception', 'dapprof.profiling.idle': true, 'dapprof.profiling.gil': true };
  const s = makeSession('m');
  adapterAnswers(s);
  startSession(s, true);
  await fake.commands.get('dapprof.startProfiling')!();
  assert.deepEqual(s.requests[0], ['startProfiling', { rate: 100, native: false, nonblocking: false, mode: 'exception', subprocesses: false, batchIntervalMs: 100, async: 'off' }]);
});

test('a failing startProfiling shows the adapter message and leaves profiling startable', async () => {
  const s = makeSession('b');
  const message =
    'Permission denied reading the memory of process 4242 (Operation not permitted). dapprof needs ptrace access to the process: run dapprof as the same user with /proc/sys/kernel/yama/ptrace_scope set to 0';
  s.answer = () => {
    throw new Error(message); // VS Code rejects customRequest with the error response's message
  };
  startSession(s, true);
  assert.equal(await controller.startProfiling(s as never), false);
  assert.equal(fake.errors.length, 1);
  assert.equal(fake.errors[0], `Could not start profiling "session b": ${message}`);
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), true);
  assert.equal(fake.contexts.get(CONTEXT_CAN_STOP), false);
  assert.equal(fake.statusBar.visible, false);
});

test('an error response marked showUser, which VS Code shows itself, is not shown a second time', async () => {
  const s = makeSession('d');
  startSession(s, true);
  // The adapter's messages pass the extension's tracker before VS Code rejects the request.
  const trackers = fake.trackerFactories.map(([, f]) => f.createDebugAdapterTracker(s));
  const refuse = (command: string, showUser: boolean, message: string) => {
    const error = { id: 2007, format: message, ...(showUser ? { showUser: true } : {}) };
    for (const t of trackers) t?.onDidSendMessage?.({ seq: 9, type: 'response', request_seq: 3, success: false, command, message, body: { error } });
    throw new Error(message);
  };
  s.answer = (command) => refuse(command, true, 'Permission denied reading the memory of process 4242.');
  assert.equal(await controller.startProfiling(s as never), false);
  assert.deepEqual(fake.errors, [], 'VS Code showed it');
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), true);

  // Without showUser, or for another request, the extension shows it.
  s.answer = (command) => refuse(command, false, 'Permission denied reading the memory of process 4242.');
  assert.equal(await controller.startProfiling(s as never), false);
  assert.deepEqual(fake.errors, ['Could not start profiling "session d": Permission denied reading the memory of process 4242.']);

  // The same for stopProfiling: an error other than "not running" keeps the run going.
  adapterAnswers(s);
  assert.equal(await controller.startProfiling(s as never), true);
  s.answer = (command) => refuse(command, true, 'Could not write the profile to /root/x.json: Permission denied.');
  assert.equal(await controller.stopProfiling(s as never), false);
  assert.equal(fake.errors.length, 1);
  assert.equal(fake.contexts.get(CONTEXT_CAN_STOP), true);
  s.answer = (command) => refuse(command, false, 'Could not write the profile to /root/x.json: Permission denied.');
  assert.equal(await controller.stopProfiling(s as never), false);
  assert.equal(fake.errors[1], 'Could not stop profiling "session d": Could not write the profile to /root/x.json: Permission denied.');
});

test('profilingStopped ends the run: exited shows the summary, error shows the message', async () => {
  const s = makeSession('c');
  adapterAnswers(s);
  startSession(s, true);
  await controller.startProfiling(s as never);
  fake.panels[0].receive({ type: 'ready', hideDebugger: true });
  fake.onCustomEvent.fire({ session: s, event: 'profilingData', body: DATA[0] });
  fake.onCustomEvent.fire({ session: s, event: 'profilingStopped', body: { reason: 'exited', message: 'Process 4242 exited.', sampleCount: 523, duration: 2617.0, errorCount: 0, droppedSampleCount: 0 } });
  assert.equal(fake.contexts.get(CONTEXT_CAN_STOP), false);
  assert.deepEqual(fake.panels[0].posted.at(-1), {
    type: 'stopped',
    stopped: { summary: { sampleCount: 523, duration: 2617, errorCount: 0, droppedSampleCount: 0 }, reason: 'exited', message: 'Process 4242 exited.' },
  });
  assert.equal(fake.errors.length, 0);

  await controller.startProfiling(s as never);
  fake.onCustomEvent.fire({ session: s, event: 'profilingStopped', body: { reason: 'error', message: 'The sampler lost the process.', sampleCount: 1, duration: 10, errorCount: 3, droppedSampleCount: 0 } });
  assert.equal(fake.errors.at(-1), 'Profiling of "session c" failed: The sampler lost the process.');
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), true);
});

test('the session ending while profiling stops the run; the panel keeps it, and its export goes to dapprof convert, not the ended session', async () => {
  const s = makeSession('d');
  adapterAnswers(s);
  startSession(s, true);
  await controller.startProfiling(s as never);
  for (const body of DATA) fake.onCustomEvent.fire({ session: s, event: 'profilingData', body });
  fake.activeDebugSession = undefined;
  fake.onTerminate.fire(s);
  fake.onActiveChanged.fire(undefined);
  assert.equal(fake.statusBar.visible, false);
  assert.equal(fake.contexts.get(CONTEXT_CAN_STOP), false);
  assert.equal(fake.contexts.get(CONTEXT_HAS_PROFILE), true, 'the run shown, ended, is still exportable');
  // The fallback summary: the totals of the batches received, nothing ranked by the client.
  const total = DATA.reduce((a, b) => a + b.sampleCount, 0);
  const log = fake.output.get('dapprof')!;
  assert.ok(log[0].startsWith(`Profiling of "session d" stopped (disconnected): ${total.toLocaleString('en-US')} samples in `), log[0]);
  assert.ok(!log.some((l) => l.startsWith('Top functions')));

  // (kept-runs.test.ts converts it with a real dapprof; here the file is not chosen.)
  fake.quickPick = 'speedscope';
  assert.equal(await controller.exportProfile(), undefined);
  assert.equal(fake.saveDialogs.length, 1, 'the file is asked for');
  assert.ok(!s.requests.some(([c]) => c === 'exportProfile'), 'an ended session is not asked');
  // The panel still shows the ended run.
  await fake.commands.get('dapprof.showFlameGraph')!();
  fake.panels[0].receive({ type: 'ready', hideDebugger: true });
  const replay = fake.panels[0].posted.at(-1) as { type: string; bodies: unknown[]; stopped: { reason: string } };
  assert.equal(replay.type, 'replay');
  assert.equal(replay.bodies.length, DATA.length);
  assert.equal(replay.stopped.reason, 'disconnected');
});

test('export without any profile says so and asks nothing', async () => {
  assert.equal(await controller.exportProfile('speedscope'), undefined);
  assert.match(fake.infos[0], /no profile to export/);
  assert.equal(fake.written.size, 0);
});

test('open source resolves relative paths against the session cwd and opens the line', async () => {
  const s = makeSession('f');
  s.configuration.cwd = '/ws/app';
  adapterAnswers(s);
  startSession(s, true);
  await controller.startProfiling(s as never);
  fake.existing.add('/ws/app/shop/io.py');
  fake.panels[0].receive({ type: 'openSource', file: 'shop/io.py', line: 40 });
  await settle();
  assert.equal(fake.shownDocuments[0].uri.fsPath, '/ws/app/shop/io.py');
  assert.equal(fake.shownDocuments[0].options.selection!.start.line, 39);
  fake.panels[0].receive({ type: 'openSource', file: '/nowhere/x.py', line: 3 });
  await settle();
  assert.match(fake.warnings.at(-1)!, /Cannot open \/nowhere\/x\.py/);
});

test('a child process announced by debugpy is debugged through dapprof as a child session', async () => {
  const parent = makeSession('p');
  startSession(parent, true);
  const body = { name: 'Subprocess 4243', request: 'attach', connect: { host: '127.0.0.1', port: 50123 }, subProcessId: 4243, type: 'debugpy' };
  fake.onCustomEvent.fire({ session: parent, event: 'debugpyAttach', body });
  await settle();
  assert.equal(fake.started.length, 1);
  assert.deepEqual(fake.started[0].config, { ...body, type: 'dapprof', request: 'attach', name: 'Subprocess 4243' });
  assert.equal(fake.started[0].options.parentSession, parent);
  assert.equal(fake.started[0].options.lifecycleManagedByParent, true);

  // Sessions of other types are left to their own extension.
  const other = makeSession('q', 'debugpy');
  fake.onCustomEvent.fire({ session: other, event: 'debugpyAttach', body });
  await settle();
  assert.equal(fake.started.length, 1);

  fake.startDebuggingResult = false;
  fake.onCustomEvent.fire({ session: parent, event: 'debugpyAttach', body: { connect: { port: 1 }, subProcessId: 7 } });
  await settle();
  assert.match(fake.warnings.at(-1)!, /Could not attach to the child process "Subprocess 7"/);
});

test('stop failing with "not profiling" ends the run; another failure keeps it running', async () => {
  const s = makeSession('g');
  startSession(s, true);
  s.answer = (c) => {
    if (c === 'startProfiling') return START_RESPONSE;
    throw new Error('Cannot stop profiling: profiling is not running in this debug session.');
  };
  await controller.startProfiling(s as never);
  await controller.stopProfiling(s as never);
  assert.equal(fake.contexts.get(CONTEXT_CAN_START), true);
  await controller.startProfiling(s as never);
  s.answer = () => {
    throw new Error('Could not write the profile: disk full.');
  };
  assert.equal(await controller.stopProfiling(s as never), false);
  assert.equal(fake.contexts.get(CONTEXT_CAN_STOP), true);
  assert.match(fake.errors.at(-1)!, /disk full/);
});

test('the adapter factory runs `dapprof stdio` from dapprof.path or PATH, with a clear error when missing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dapprof-path-'));
  const savedPath = process.env.PATH;
  try {
    const exe = fakeDapprof(dir, 'dapprof');
    assert.equal(findExecutable('dapprof', `/nonexistent:${dir}`), exe);
    assert.equal(findExecutable(exe, ''), exe);
    assert.equal(findExecutable('dapprof', '/nonexistent'), undefined);
    writeFileSync(join(dir, 'noexec'), '');
    assert.equal(findExecutable(join(dir, 'noexec'), ''), undefined, 'not executable');

    const factory = new DapprofAdapterFactory();
    const session = makeSession('h');
    fake.config = { 'dapprof.path': exe };
    const d = (await factory.createDebugAdapterDescriptor(session as never)) as unknown as { command: string; args: string[] };
    assert.deepEqual([d.command, d.args], [exe, ['stdio']]);
    // Attaching to debugpy.listen(): dapprof connects to debugpy's adapter there.
    session.configuration = { type: 'dapprof', request: 'attach', connect: { host: 'localhost', port: 5678 } };
    const a = (await factory.createDebugAdapterDescriptor(session as never)) as unknown as { command: string; args: string[] };
    assert.deepEqual([a.command, a.args], [exe, ['stdio', '--connect=localhost:5678']]);
    session.configuration = { type: 'dapprof', request: 'attach', connect: { port: 5678 } };
    assert.deepEqual(((await factory.createDebugAdapterDescriptor(session as never)) as unknown as { args: string[] }).args, ['stdio', '--connect=127.0.0.1:5678']);
    // A child process announced by debugpyAttach: its session is already served by dapprof at `connect`.
    session.configuration = { type: 'dapprof', request: 'attach', name: 'Subprocess 42', subProcessId: 42, connect: { host: '127.0.0.1', port: 40123 } };
    const c = (await factory.createDebugAdapterDescriptor(session as never)) as unknown as { port: number; host: string };
    assert.ok(c instanceof DebugAdapterServer);
    assert.deepEqual([c.port, c.host], [40123, '127.0.0.1']);
    session.configuration = { type: 'dapprof', request: 'launch', program: 'a.py' };
    fake.config = { 'dapprof.path': join(dir, 'missing') };
    await assert.rejects(factory.createDebugAdapterDescriptor(session as never), /dapprof was not found at ".*missing" \(setting dapprof\.path\)/);
    fake.config = { 'dapprof.path': join(dir, 'noexec') };
    await assert.rejects(factory.createDebugAdapterDescriptor(session as never), /dapprof is not executable \(chmod \+x it\) at ".*noexec" \(setting dapprof\.path\)/);
    fake.config = { 'dapprof.path': 'no-such-dapprof-here' };
    await assert.rejects(factory.createDebugAdapterDescriptor(session as never), /"no-such-dapprof-here" \(setting dapprof\.path\) was not found on PATH/);
    // Unset, in an extension without a dapprof of its own: the one on PATH.
    fake.config = {};
    process.env.PATH = `/nonexistent:${dir}`;
    const p = (await factory.createDebugAdapterDescriptor(session as never)) as unknown as { command: string };
    assert.equal(p.command, exe);
    process.env.PATH = '/nonexistent';
    await assert.rejects(factory.createDebugAdapterDescriptor(session as never), /dapprof was not found: this installation of the extension has no dapprof of its own for linux-x64 .*and there is none on PATH/);
  } finally {
    process.env.PATH = savedPath;
    rmSync(dir, { recursive: true, force: true });
  }
});

/** An executable that answers --version as dapprof does (and would serve `stdio` no better). */
function fakeDapprof(dir: string, name: string, script = 'echo "dapprof 9.8.7 (commit 0123456789ab)"'): string {
  const f = join(dir, name);
  mkdirSync(dirname(f), { recursive: true });
  writeFileSync(f, `#!/bin/sh\n${script}\n`);
  chmodSync(f, 0o755);
  return f;
}

test('with dapprof.path unset the extension runs its own dapprof (bin/linux-x64/dapprof), and the setting overrides it', async () => {
  const ext = mkdtempSync(join(tmpdir(), 'dapprof-ext-'));
  const savedPath = process.env.PATH;
  try {
    const bundled = fakeDapprof(ext, 'bin/linux-x64/dapprof');
    assert.equal(bundledExecutable(ext), bundled);
    assert.equal(bundledExecutable(ext, 'darwin', 'arm64'), join(ext, 'bin', 'darwin-arm64', 'dapprof'));
    // Another dapprof on PATH does not win over the bundled one.
    const onPath = fakeDapprof(join(ext, 'path'), 'dapprof');
    process.env.PATH = dirname(onPath);
    const factory = new DapprofAdapterFactory(ext);
    const session = makeSession('b');
    for (const unset of [{}, { 'dapprof.path': '' }, { 'dapprof.path': '  ' }]) {
      fake.config = unset;
      const d = (await factory.createDebugAdapterDescriptor(session as never)) as unknown as { command: string; args: string[] };
      assert.deepEqual([d.command, d.args], [bundled, ['stdio']], JSON.stringify(unset));
    }
    fake.config = { 'dapprof.path': 'dapprof' };
    assert.equal(((await factory.createDebugAdapterDescriptor(session as never)) as unknown as { command: string }).command, onPath);
    const other = fakeDapprof(ext, 'elsewhere/dapprof');
    fake.config = { 'dapprof.path': other };
    assert.equal(((await factory.createDebugAdapterDescriptor(session as never)) as unknown as { command: string }).command, other);
    // The bundled file lost its executable bit: said so, not "not found".
    chmodSync(bundled, 0o644);
    fake.config = {};
    await assert.rejects(factory.createDebugAdapterDescriptor(session as never), /^Error: The dapprof bundled with the extension \(.*bin\/linux-x64\/dapprof\) is not executable\. Reinstall the extension/);
  } finally {
    process.env.PATH = savedPath;
    rmSync(ext, { recursive: true, force: true });
  }
});

test('a dapprof that does not run is refused before the session starts, with the reason', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dapprof-broken-'));
  try {
    const factory = new DapprofAdapterFactory();
    const session = makeSession('x');
    const refused = async (file: string, reason: RegExp) => {
      fake.config = { 'dapprof.path': file };
      await assert.rejects(factory.createDebugAdapterDescriptor(session as never), (e: Error) => {
        assert.match(e.message, new RegExp(`^The dapprof named by the setting dapprof\\.path \\(${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\) does not run: `));
        assert.match(e.message, reason);
        assert.match(e.message, /Correct the setting dapprof\.path, or clear it to use the dapprof bundled with the extension\.$/);
        return true;
      });
    };
    // Text with the executable bit: not a program at all.
    const text = join(dir, 'text');
    writeFileSync(text, 'not a program\n');
    chmodSync(text, 0o755);
    await refused(text, /it is not a program \(neither an ELF executable nor a script\)/);
    // An ELF executable for another machine (aarch64's header): not started at all.
    const arm = join(dir, 'arm64-dapprof');
    const header = Buffer.alloc(64);
    header.writeUInt32BE(0x7f454c46, 0);
    header[4] = 2; // 64-bit
    header[5] = 1; // little-endian
    header.writeUInt16LE(2, 16); // ET_EXEC
    header.writeUInt16LE(183, 18); // EM_AARCH64
    writeFileSync(arm, header);
    chmodSync(arm, 0o755);
    await refused(arm, /it is a program for arm64 \(ELF machine 183\), not for this machine \(x64\)/);
    // It runs but fails, as a binary missing a library does: the loader's words are in the message.
    const missingLib = fakeDapprof(dir, 'nolib', "echo 'dapprof: error while loading shared libraries: libspdlog.so.1.10: cannot open shared object file: No such file or directory' >&2; exit 127");
    await refused(missingLib, /a library it needs is missing: .*libspdlog\.so\.1\.10: cannot open shared object file/);
    const oldGlibc = fakeDapprof(dir, 'oldglibc', "echo \"dapprof: /lib/x86_64-linux-gnu/libc.so.6: version \\`GLIBC_2.38' not found (required by dapprof)\" >&2; exit 1");
    await refused(oldGlibc, /it needs a newer glibc than this system's: .*GLIBC_2\.38' not found/);
    const failing = fakeDapprof(dir, 'failing', 'echo boom >&2; exit 3');
    await refused(failing, /"--version" failed \(exit code 3\): boom/);
    // It runs, but is something else.
    const other = fakeDapprof(dir, 'other', 'echo "Python 3.11.2"');
    await refused(other, /it is not dapprof: "--version" printed "Python 3\.11\.2"/);
    // A script whose interpreter is missing: execve's ENOENT for a file that is there.
    const noInterp = join(dir, 'nointerp');
    writeFileSync(noInterp, '#!/nonexistent/interpreter\n');
    chmodSync(noInterp, 0o755);
    await refused(noInterp, /its program interpreter is missing/);
    // A good one: the line --version printed.
    const good = fakeDapprof(dir, 'good');
    assert.equal(await checkDapprof({ exe: good, origin: 'setting' }), 'dapprof 9.8.7 (commit 0123456789ab)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('F5 without launch.json debugs the current Python file; configurations pass through', () => {
  const p = new DapprofConfigurationProvider();
  fake.activeTextEditor = { document: { languageId: 'python' } };
  assert.deepEqual(p.resolveDebugConfiguration(undefined, {} as never), {
    type: 'dapprof',
    request: 'launch',
    name: 'Python: Current File (dapprof)',
    program: '${file}',
    console: 'integratedTerminal',
    justMyCode: true,
  });
  fake.activeTextEditor = { document: { languageId: 'plaintext' } };
  assert.equal(p.resolveDebugConfiguration(undefined, {} as never), undefined);
  const config = { type: 'dapprof', request: 'launch', name: 'x', module: 'app', args: ['-v'], env: { A: '1' }, python: '/usr/bin/python3', justMyCode: false, subProcess: true };
  assert.deepEqual(p.resolveDebugConfiguration(undefined, { ...config }), config);
  assert.equal(p.resolveDebugConfiguration(undefined, { type: 'dapprof', request: 'launch', name: 'y' }), undefined);
  assert.match(fake.errors.at(-1)!, /needs "program", "module" or "code"/);
});

test('package.json contributes the debug type, toolbar buttons bound to the context keys, commands and settings', () => {
  const pkg = JSON.parse(readFileSync(join(clientRoot, 'package.json'), 'utf8'));
  const c = pkg.contributes;
  assert.deepEqual(c.breakpoints, [{ language: 'python' }]);
  assert.equal(c.debuggers[0].type, 'dapprof');
  assert.ok(c.debuggers[0].configurationAttributes.launch.properties.program);
  assert.ok(c.debuggers[0].configurationAttributes.attach.properties.connect);
  assert.ok(c.debuggers[0].initialConfigurations.length > 0);
  assert.ok(c.debuggers[0].configurationSnippets.length >= 3);
  const toolbar = c.menus['debug/toolBar'];
  assert.deepEqual(
    toolbar.map((m: { command: string; when: string }) => [m.command, m.when]),
    [
      ['dapprof.startProfiling', CONTEXT_CAN_START],
      ['dapprof.stopProfiling', CONTEXT_CAN_STOP],
    ],
  );
  const declared = new Set(c.commands.map((x: { command: string }) => x.command));
  resetFake();
  const ctx = { subscriptions: [] as Array<{ dispose(): void }>, extensionUri: Uri.file('/ext') };
  activate(ctx as never);
  assert.deepEqual(new Set(fake.commands.keys()), declared, 'every declared command is registered, and only those');
  for (const k of ['rate', 'native', 'idle', 'gil', 'batchIntervalMs', 'async']) assert.ok(c.configuration.properties[`dapprof.profiling.${k}`], k);
  assert.equal(c.configuration.properties['dapprof.path'].default, '', 'unset: the bundled dapprof, else PATH');
  assert.equal(pkg.engines.vscode, '^1.90.0');
  assert.ok(pkg.activationEvents.includes('onDebug'), 'active before any session starts, so the tracker sees initialize');
  for (const d of ctx.subscriptions) d.dispose();
  void vscodeStub;
});
