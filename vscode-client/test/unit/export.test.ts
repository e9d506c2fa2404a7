// Export Profile…: the daemon writes the document (exportProfile), the extension saves exactly
// its content where the user says, with the panel's "Hide debugger" choice. VS Code is stubbed
// (test/support/fake-vscode.ts); the fake session answers as dapprof does.
import { fake, FakeSession, makeSession, resetFake, startSession, Uri } from '../support/fake-vscode';
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { ProfilingController } from '../../src/extension/controller';
import { EXPORT_FORMATS } from '../../src/extension/export';
import type { ExportProfileArguments } from '../../src/model/protocol';
import { ProfilingErrorId } from '../../src/model/protocol';

const START = { pid: 4242, pythonVersion: '3.12.1', rate: 100, native: false, nonblocking: false, idle: false, gil: false, subprocesses: false, batchIntervalMs: 100 };
const EXTENSIONS: Record<string, string> = { speedscope: 'json', cpuprofile: 'cpuprofile', collapsed: 'txt', flamegraph: 'svg', chrometrace: 'json', pprof: 'pb.gz', gecko: 'json' };
/** pprof's document is bytes (gzip): the daemon sends them base64-encoded. */
const PPROF_BYTES = Uint8Array.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0x00, 0x80, 0x7f]);
/** Not JSON and not ASCII: the extension must write the content as given, not re-encode it. */
const contentOf = (a: ExportProfileArguments) => `${a.format} hide=${a.hideDebugger} — naïve ✓\n`;

let controller: ProfilingController;
beforeEach(() => {
  controller?.dispose();
  resetFake();
  controller = new ProfilingController(Uri.file('/ext') as never);
});

/** A session whose run has started, answering exportProfile as the daemon does. */
async function profiled(id = 'x'): Promise<FakeSession> {
  const s = makeSession(id, 'dapprof', 'app.py (dapprof)');
  s.answer = (command, args) => {
    if (command === 'startProfiling') return START;
    if (command === 'exportProfile') {
      const a = args as ExportProfileArguments;
      if (a.format === 'pprof') return { format: a.format, fileExtension: 'pb.gz', content: Buffer.from(PPROF_BYTES).toString('base64'), contentEncoding: 'base64', sampleCount: 42 };
      return { format: a.format, fileExtension: EXTENSIONS[a.format!], content: contentOf(a), contentEncoding: 'text', sampleCount: 42 };
    }
    throw new Error(`unexpected ${command}`);
  };
  startSession(s, true);
  assert.equal(await controller.startProfiling(s as never), true);
  return s;
}

const written = (path: string) => new TextDecoder().decode(fake.written.get(path));

test('every format of the protocol is offered; the file written is the content the daemon sent', async () => {
  const s = await profiled();
  fake.quickPick = 'speedscope';
  fake.saveUri = Uri.file('/ws/out.speedscope.json');
  const uri = await fake.commands.get('dapprof.exportProfile')!();
  assert.deepEqual(fake.quickPickItems[0], ['speedscope', 'cpuprofile', 'collapsed', 'flamegraph', 'chrometrace', 'pprof', 'gecko']);
  assert.deepEqual(EXPORT_FORMATS.map((f) => f.format), fake.quickPickItems[0]);
  assert.deepEqual(s.requests.at(-1), ['exportProfile', { format: 'speedscope', hideDebugger: true }]);
  assert.equal(written('/ws/out.speedscope.json'), contentOf({ format: 'speedscope', hideDebugger: true }));
  assert.deepEqual(fake.executed.at(-1), ['vscode.open', uri]);
  // The dialog proposes a name with the daemon's extension, in the session's folder.
  const dialog = fake.saveDialogs[0];
  assert.equal(dialog.defaultUri?.fsPath, '/ws/app.py_dapprof_.speedscope.json');
  assert.deepEqual(dialog.filters, { speedscope: ['json'] });
});

test('the file name and filter follow the extension the daemon gives each format', async () => {
  await profiled();
  for (const [format, name] of [
    ['cpuprofile', 'app.py_dapprof_.cpuprofile'],
    ['collapsed', 'app.py_dapprof_.collapsed.txt'],
    ['flamegraph', 'app.py_dapprof_.flamegraph.svg'],
    ['chrometrace', 'app.py_dapprof_.chrometrace.json'],
    ['gecko', 'app.py_dapprof_.gecko.json'],
  ]) {
    fake.saveUri = Uri.file(`/tmp/${name}`);
    await controller.exportProfile(format);
    assert.equal(fake.saveDialogs.at(-1)!.defaultUri?.fsPath, `/ws/${name}`);
    assert.deepEqual(fake.saveDialogs.at(-1)!.filters, { [format]: [EXTENSIONS[format]] });
    assert.equal(written(`/tmp/${name}`), contentOf({ format: format as ExportProfileArguments['format'], hideDebugger: true }));
  }
  assert.equal(fake.quickPickItems.length, 0, 'a format given as the argument is not asked for');
});

test('pprof: the bytes of its base64 are written, under .pb.gz, and not opened as text', async () => {
  await profiled();
  fake.saveUri = Uri.file('/tmp/app.pprof.pb.gz');
  const opened = fake.executed.length;
  assert.ok(await controller.exportProfile('pprof'));
  assert.equal(fake.saveDialogs.at(-1)!.defaultUri?.fsPath, '/ws/app.py_dapprof_.pprof.pb.gz');
  assert.deepEqual(fake.saveDialogs.at(-1)!.filters, { pprof: ['gz'] });
  assert.deepEqual(Array.from(fake.written.get('/tmp/app.pprof.pb.gz')!), Array.from(PPROF_BYTES));
  assert.equal(fake.executed.length, opened, 'a binary profile is not opened in an editor');
  assert.match(fake.infos.at(-1) ?? '', /app\.pprof\.pb\.gz/);
});

test("hideDebugger follows the panel's checkbox at the time of the export", async () => {
  const s = await profiled();
  const panel = fake.panels[0];
  // The page says its choice when it loads (a persisted one, say) and when the user changes it.
  panel.receive({ type: 'ready', hideDebugger: false });
  fake.saveUri = Uri.file('/ws/a.json');
  await controller.exportProfile('speedscope');
  assert.deepEqual(s.requests.at(-1), ['exportProfile', { format: 'speedscope', hideDebugger: false }]);
  assert.equal(written('/ws/a.json'), 'speedscope hide=false — naïve ✓\n');
  panel.receive({ type: 'hideDebugger', hideDebugger: true });
  await controller.exportProfile('collapsed');
  assert.deepEqual(s.requests.at(-1), ['exportProfile', { format: 'collapsed', hideDebugger: true }]);
  // Stopping uses it too, for the daemon's top functions.
  panel.receive({ type: 'hideDebugger', hideDebugger: false });
  s.answer = () => ({ sampleCount: 0, duration: 0, errorCount: 0, droppedSampleCount: 0 });
  await controller.stopProfiling(s as never);
  assert.deepEqual(s.requests.at(-1), ['stopProfiling', { hideDebugger: false }]);
});

test("a finished run stays exportable: the daemon keeps it and is asked after the stop", async () => {
  const s = await profiled();
  const answer = s.answer;
  s.answer = (c, a) => (c === 'stopProfiling' ? { sampleCount: 42, duration: 420, errorCount: 0, droppedSampleCount: 0 } : answer(c, a));
  await controller.stopProfiling(s as never);
  fake.saveUri = Uri.file('/ws/after.cpuprofile');
  assert.ok(await controller.exportProfile('cpuprofile'));
  assert.equal(written('/ws/after.cpuprofile'), contentOf({ format: 'cpuprofile', hideDebugger: true }));
});

test("the daemon's refusal is shown with its message, before any file is asked for", async () => {
  const s = await profiled();
  const message = 'Cannot export: no profiling run has been started in this debug session.';
  const trackers = fake.trackerFactories.map(([, f]) => f.createDebugAdapterTracker(s));
  const refuse = (showUser: boolean) => () => {
    const error = { id: ProfilingErrorId.NoProfile, format: message, ...(showUser ? { showUser: true } : {}) };
    for (const t of trackers) t?.onDidSendMessage?.({ seq: 9, type: 'response', request_seq: 3, success: false, command: 'exportProfile', message, body: { error } });
    throw new Error(message);
  };
  s.answer = refuse(false);
  fake.saveUri = Uri.file('/ws/never.json');
  assert.equal(await controller.exportProfile('speedscope'), undefined);
  assert.deepEqual(fake.errors, [`Could not export the profile of "app.py (dapprof)": ${message}`]);
  assert.equal(fake.saveDialogs.length, 0);
  assert.equal(fake.written.size, 0);
  // Marked showUser, VS Code shows it itself: not a second time.
  s.answer = refuse(true);
  assert.equal(await controller.exportProfile('speedscope'), undefined);
  assert.equal(fake.errors.length, 1);
});

test('cancelling the format or the file writes nothing', async () => {
  const s = await profiled();
  fake.quickPick = undefined;
  assert.equal(await controller.exportProfile(), undefined);
  assert.ok(!s.requests.some(([c]) => c === 'exportProfile'));
  fake.saveUri = undefined;
  assert.equal(await controller.exportProfile('flamegraph'), undefined);
  assert.equal(fake.written.size, 0);
});
