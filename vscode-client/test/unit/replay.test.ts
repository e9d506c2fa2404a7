// A panel opened late, or closed and re-opened, replays the raw stream the extension host kept:
// the host forwards batches and never aggregates them, so the replayed panel aggregates the same
// bodies through the same path as a panel that saw them live.
import { fake, makeSession, resetFake, startSession, Uri } from '../support/fake-vscode';
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { ProfilingController } from '../../src/extension/controller';
import { RunStream } from '../../src/extension/run-stream';
import { ProfileModel } from '../../src/model/profile';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { flattenModelTree, readStream, sortedEntries } from '../support/reference';

const START = { pid: 4242, pythonVersion: '3.12.1', rate: 100, native: false, nonblocking: false, idle: false, gil: false, subprocesses: false, batchIntervalMs: 100 };
const DATA = readStream('live-stream.jsonl');
const samplesOf = (bodies: ProfilingDataBody[]) => bodies.reduce((a, b) => a + b.samples.length, 0);

let controller: ProfilingController;
beforeEach(() => {
  controller?.dispose();
  resetFake();
  controller = new ProfilingController(Uri.file('/ext') as never);
});

function aggregate(bodies: ProfilingDataBody[]): ProfileModel {
  const m = new ProfileModel();
  for (const b of bodies) m.addBatch(b);
  return m;
}

test('a panel opened after data arrived replays the stream so far, then gets the rest live', async () => {
  fake.config = { 'dapprof.profiling.openFlameGraph': false };
  const s = makeSession('e');
  s.answer = (c) => (c === 'startProfiling' ? START : { sampleCount: samplesOf(DATA), duration: 1, errorCount: 0, droppedSampleCount: 0 });
  startSession(s, true);
  await controller.startProfiling(s as never);
  assert.equal(fake.panels.length, 0, 'openFlameGraph: false keeps it closed');
  const half = DATA.length >> 1;
  for (const body of DATA.slice(0, half)) fake.onCustomEvent.fire({ session: s, event: 'profilingData', body });
  // The status bar counts the batches' samples.
  assert.equal(fake.statusBar.text, `$(flame) ${samplesOf(DATA.slice(0, half))} samples · 100 Hz`);

  await fake.commands.get('dapprof.showFlameGraph')!();
  const panel = fake.panels[0];
  panel.receive({ type: 'ready', hideDebugger: true });
  const replay = panel.posted.at(-1) as { type: string; bodies: ProfilingDataBody[]; omittedSamples: number; stopped?: unknown };
  assert.equal(replay.type, 'replay');
  assert.deepEqual(replay.bodies, DATA.slice(0, half), 'the bodies as received');
  assert.equal(replay.omittedSamples, 0);
  assert.equal(replay.stopped, undefined, 'still running');
  for (const body of DATA.slice(half)) fake.onCustomEvent.fire({ session: s, event: 'profilingData', body });
  const live = panel.posted.filter((m) => (m as { type: string }).type === 'data').map((m) => (m as { body: ProfilingDataBody }).body);
  assert.deepEqual(live, DATA.slice(half));
  // What the page aggregates from replay + live equals the whole stream, with the debugger hidden too.
  const page = aggregate([...replay.bodies, ...live]);
  const whole = aggregate(DATA);
  for (const hide of [false, true]) assert.deepEqual(sortedEntries(flattenModelTree(page, 'function', undefined, hide)), sortedEntries(flattenModelTree(whole, 'function', undefined, hide)));

  // Closed and re-opened after the stop: the whole run, and its summary.
  await controller.stopProfiling(s as never);
  panel.dispose();
  await fake.commands.get('dapprof.showFlameGraph')!();
  const again = fake.panels[1];
  again.receive({ type: 'ready', hideDebugger: true });
  const r2 = again.posted.at(-1) as { type: string; bodies: ProfilingDataBody[]; stopped: { reason: string; summary: { sampleCount: number } } };
  assert.equal(r2.type, 'replay');
  assert.deepEqual(r2.bodies, DATA);
  assert.equal(r2.stopped.reason, 'stopProfiling');
  assert.equal(r2.stopped.summary.sampleCount, samplesOf(DATA));
});

test('past its bound the stream lets the oldest samples go, keeping their frames and threads, and says how many', () => {
  const bound = 40;
  const stream = new RunStream(bound);
  for (const b of DATA) stream.add(b);
  const { bodies, omittedSamples } = stream.replay();
  const total = samplesOf(DATA);
  assert.equal(stream.totals.sampleCount, total, 'the totals count every batch');
  assert.equal(stream.totals.batches, DATA.length);
  assert.equal(samplesOf(bodies) + omittedSamples, total);
  assert.ok(samplesOf(bodies) <= bound + Math.max(...DATA.map((b) => b.samples.length)));
  assert.ok(omittedSamples > 0);
  // The kept bodies are the newest ones, as received, after one head of frames and threads.
  const kept = bodies.length - 1;
  assert.deepEqual(bodies.slice(1), DATA.slice(DATA.length - kept));
  const head = bodies[0];
  assert.equal(head.samples.length, 0);
  const announced = (bs: ProfilingDataBody[]) => new Set(bs.flatMap((b) => Object.keys(b.newFrames)));
  assert.deepEqual(announced(bodies), announced(DATA), 'every frame of the run is still announced');
  // So the replay aggregates without unknown frames: the newest samples, exactly.
  const m = aggregate(bodies);
  assert.equal(m.totals.unknownFrameRefs, 0);
  assert.equal(m.totals.sampleCount, samplesOf(DATA.slice(DATA.length - kept)));
  assert.ok(m.threadList().every((t) => t.info !== undefined), 'every thread is named');
});

test('a stream with stacks is bounded by its samples too, and its replay keeps every stack', () => {
  const compact = readStream('live-stacks-stream.jsonl');
  const bound = 40;
  const stream = new RunStream(bound);
  for (const b of compact) stream.add(b);
  const { bodies, omittedSamples } = stream.replay();
  const total = compact.reduce((a, b) => a + b.sampleCount, 0);
  assert.equal(stream.totals.sampleCount, total);
  assert.ok(omittedSamples > 0);
  assert.equal(bodies.slice(1).reduce((a, b) => a + b.sampleCount, 0) + omittedSamples, total);
  const head = bodies[0];
  assert.equal(head.samples.length, 0);
  assert.equal(head.stackIds, undefined, 'the head carries definitions only');
  const stacks = (bs: ProfilingDataBody[]) => new Set(bs.flatMap((b) => Object.keys(b.newStacks ?? {})));
  assert.deepEqual(stacks(bodies), stacks(compact), 'every stack of the run is still announced');
  const m = aggregate(bodies);
  assert.equal(m.totals.unknownFrameRefs, 0);
  assert.equal(m.totals.sampleCount, total - omittedSamples);
});

test('the newest batch is kept even when it alone exceeds the bound', () => {
  const stream = new RunStream(1);
  for (const b of DATA.slice(0, 3)) stream.add(b);
  const { bodies } = stream.replay();
  assert.deepEqual(bodies.at(-1), DATA[2]);
  assert.equal(bodies.length, 2);
});

test('showing the panel that already shows the run only reveals it: no replay resets its view', async () => {
  const s = makeSession('g');
  s.answer = () => START;
  startSession(s, true);
  await controller.startProfiling(s as never);
  const panel = fake.panels[0];
  panel.receive({ type: 'ready', hideDebugger: true });
  for (const body of DATA.slice(0, 3)) fake.onCustomEvent.fire({ session: s, event: 'profilingData', body });
  const before = panel.posted.length;
  await fake.commands.get('dapprof.showFlameGraph')!();
  assert.equal(panel.posted.length, before);
  assert.equal(fake.panels.length, 1);
});
