// Runs that outlive their session: kept in the workspace's storage (a temporary directory here),
// the last N only; exported after their session ended by a real `dapprof convert` of the kept
// stream; reopened and offered as a baseline by a controller made afresh (a window reload).
// VS Code is stubbed (test/support/fake-vscode.ts); the stream is a recorded one's.
import { fake, makeSession, resetFake, startSession, Uri } from '../support/fake-vscode';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, test } from 'node:test';
import { ProfilingController } from '../../src/extension/controller';
import { RunStore } from '../../src/extension/run-store';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { readStream, repoRoot } from '../support/reference';

const DAPPROF = process.env.DAPPROF_BIN ?? join(repoRoot, 'build/default/src/dapprof');
const skip = existsSync(DAPPROF) ? false : `no dapprof at ${DAPPROF} (build it, or set DAPPROF_BIN)`;
const DATA: ProfilingDataBody[] = readStream('live-stream.jsonl');
const TOTAL = DATA.reduce((n, b) => n + b.sampleCount, 0);
const dir = mkdtempSync(join(tmpdir(), 'dapprof-kept-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let controller: ProfilingController | undefined;
afterEach(() => {
  controller?.dispose();
  controller = undefined;
});

function run(info: { session: string }) {
  return { session: info.session, pid: 42, rate: 100, path: 'proxy' as const };
}
const summary = (n: number) => ({ sampleCount: n, duration: 1000, errorCount: 0, droppedSampleCount: 0 });

test('the store keeps the last N runs, newest first, each read back as it was sent', async () => {
  const store = new RunStore(join(dir, 'store'), () => 2);
  const first = await store.save(run({ session: 'a' }), DATA, summary(TOTAL));
  await store.save(run({ session: 'b' }), DATA.slice(0, 1), summary(DATA[0].sampleCount));
  await store.save(run({ session: 'c' }), DATA.slice(0, 2), summary(1));
  const kept = await store.list();
  assert.deepEqual(kept.map((k) => k.run.session), ['c', 'b']);
  assert.equal(existsSync(store.file(first!.id)!), false, 'the oldest run is gone with its file');
  assert.deepEqual(await store.bodies(kept[1].id), DATA.slice(0, 1));
  // Nothing is kept without a storage directory (no workspace), and no path leaves it.
  assert.equal(await new RunStore(undefined, () => 10).save(run({ session: 'x' }), DATA, summary(1)), undefined);
  assert.equal(store.file('../../etc/passwd'), undefined);
});

test("a run whose session ended exports in any format through dapprof convert; after a reload it is listed, reopened and a baseline", { skip }, async () => {
  resetFake();
  const storeDir = join(dir, 'workspace-storage');
  const store = new RunStore(storeDir, () => 10);
  controller = new ProfilingController(Uri.file('/ext') as never, async () => DAPPROF, store);
  const s = makeSession('k');
  s.answer = (command) => {
    if (command === 'startProfiling') return { pid: 4242, pythonVersion: '3.12.1', rate: 100 };
    if (command === 'stopProfiling') return summary(TOTAL);
    throw new Error(`unexpected ${command}`);
  };
  startSession(s, true);
  await controller.startProfiling(s as never);
  for (const body of DATA) fake.onCustomEvent.fire({ session: s, event: 'profilingData', body });
  await controller.stopProfiling(s as never);
  fake.onTerminate.fire(s);
  // Kept once stopped (asynchronously).
  for (let i = 0; i < 100 && (await store.list()).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal((await store.list()).length, 1);

  // The session has ended: dapprof convert writes the format from the kept stream.
  const out = join(dir, 'ended.collapsed.txt');
  fake.quickPick = 'collapsed';
  fake.saveUri = Uri.file(out);
  const saved = await controller.exportProfile();
  assert.equal(saved?.fsPath, out, fake.errors.join(' | '));
  const lines = readFileSync(out, 'utf8').trim().split('\n');
  assert.equal(lines.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0), TOTAL, 'every sample of the run');
  fake.quickPick = 'pprof';
  fake.saveUri = Uri.file(join(dir, 'ended.pb.gz'));
  await controller.exportProfile();
  assert.deepEqual([...readFileSync(join(dir, 'ended.pb.gz')).subarray(0, 2)], [0x1f, 0x8b]);
  assert.deepEqual(fake.errors, []);

  // A window reload: a new controller over the same storage lists the run and reopens it.
  controller.dispose();
  resetFake();
  controller = new ProfilingController(Uri.file('/ext') as never, async () => DAPPROF, new RunStore(storeDir, () => 10));
  fake.quickPick = `${s.name} (pid 4242)`;
  assert.equal(await fake.commands.get('dapprof.openKeptRun')!(), true);
  const panel = fake.panels[0];
  panel.receive({ type: 'ready', hideDebugger: true });
  const replay = panel.posted.at(-1) as { type: string; bodies: ProfilingDataBody[]; run: { session: string }; stopped: { summary: { sampleCount: number } } };
  assert.equal(replay.type, 'replay');
  assert.equal(replay.bodies.reduce((n, b) => n + b.sampleCount, 0), TOTAL);
  assert.equal(replay.stopped.summary.sampleCount, TOTAL);
  // The reopened run exports too (no session ever existed in this window).
  fake.quickPick = 'speedscope';
  fake.saveUri = Uri.file(join(dir, 'reopened.speedscope'));
  assert.ok(await controller.exportProfile());
  assert.equal(JSON.parse(readFileSync(join(dir, 'reopened.speedscope'), 'utf8')).$schema, 'https://www.speedscope.app/file-format-schema.json');
  // And it is a baseline of the panel's "Compare with…".
  fake.quickPick = `${s.name} (pid 4242)`;
  panel.receive({ type: 'pickBaseline' });
  for (let i = 0; i < 100 && !panel.posted.some((m) => (m as { type: string }).type === 'baseline'); i++) await new Promise((r) => setTimeout(r, 20));
  const baseline = panel.posted.find((m) => (m as { type: string }).type === 'baseline') as { label: string; bodies: ProfilingDataBody[] };
  assert.equal(baseline.label, `${s.name} (pid 4242)`);
  assert.equal(baseline.bodies.length, DATA.length);
});
