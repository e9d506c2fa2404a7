// The stop summary: the daemon's totals and top functions, laid out in the columns of the
// daemon's CLI summary (src/formats/summary.cpp, format_summary); nothing ranked by the client.
import { fake, makeSession, resetFake, startSession, Uri } from '../support/fake-vscode';
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { ProfilingController } from '../../src/extension/controller';
import { topFunctionsTable } from '../../src/extension/summary';
import type { ProfilingSummary } from '../../src/model/protocol';

const START = { pid: 4242, pythonVersion: '3.12.1', rate: 100, native: false, nonblocking: false, idle: false, gil: false, subprocesses: false, batchIntervalMs: 100 };
const SUMMARY: ProfilingSummary = {
  sampleCount: 500,
  duration: 5012.5,
  errorCount: 0,
  droppedSampleCount: 2,
  topFunctions: [
    { function: 'fibonacci', file: '/ws/app.py', self: 300, total: 310 },
    { function: 'checksum', file: '/ws/app.py', self: 120, total: 120 },
    { function: 'time.sleep', file: '', self: 5, total: 5 },
    { function: 'main', file: '/ws/app.py', self: 0, total: 500 },
  ],
};

let controller: ProfilingController;
beforeEach(() => {
  controller?.dispose();
  resetFake();
  controller = new ProfilingController(Uri.file('/ext') as never);
});

test("the table has format_summary's columns and widths", () => {
  assert.deepEqual(topFunctionsTable(SUMMARY), [
    'Top functions by own samples (of 500 thread samples):',
    '     %Own  %Total  OwnSmpl  TotSmpl  Function (file)',
    '   60.00%  62.00%      300      310  fibonacci (/ws/app.py)',
    '   24.00%  24.00%      120      120  checksum (/ws/app.py)',
    '    1.00%   1.00%        5        5  time.sleep',
    '    0.00% 100.00%        0      500  main (/ws/app.py)',
  ]);
  assert.deepEqual(topFunctionsTable({ ...SUMMARY, topFunctions: undefined }), []);
});

test("stopping shows the daemon's totals and top function; its table goes to the output channel", async () => {
  const s = makeSession('s', 'dapprof', 'app.py');
  s.answer = (c) => (c === 'startProfiling' ? START : SUMMARY);
  startSession(s, true);
  await controller.startProfiling(s as never);
  fake.panels[0].receive({ type: 'ready', hideDebugger: true });
  fake.infoChoice = 'Show Summary';
  await controller.stopProfiling(s as never);
  assert.equal(fake.infos.at(-1), 'Profiling stopped: 500 samples in 5.0 s, 2 dropped. Top function: fibonacci (60.0% own).');
  assert.deepEqual(fake.infoChoices.at(-1), ['Show Flame Graph', 'Show Summary', 'Export…']);
  const log = fake.output.get('dapprof')!;
  assert.deepEqual(log, ['Profiling of "app.py" stopped: 500 samples in 5.0 s, 2 dropped.', ...topFunctionsTable(SUMMARY), '']);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(fake.outputShown, ['dapprof'], '"Show Summary" opens the channel');
  // The panel gets the daemon's summary, top functions included.
  const stopped = fake.panels[0].posted.at(-1) as { type: string; stopped: { summary: ProfilingSummary } };
  assert.deepEqual(stopped.stopped.summary, SUMMARY);
});

test('a run that ended without top functions (it failed) shows the totals only', async () => {
  const s = makeSession('f', 'dapprof', 'app.py');
  s.answer = () => START;
  startSession(s, true);
  await controller.startProfiling(s as never);
  fake.onCustomEvent.fire({ session: s, event: 'profilingStopped', body: { reason: 'error', message: 'The sampler lost the process.', sampleCount: 7, duration: 70, errorCount: 3, droppedSampleCount: 0 } });
  assert.equal(fake.errors.at(-1), 'Profiling of "app.py" failed: The sampler lost the process.');
  assert.deepEqual(fake.output.get('dapprof'), ['Profiling of "app.py" stopped (error): 7 samples in 0.1 s, 3 read errors.', 'The sampler lost the process.', '']);
  // An exit carries the daemon's table.
  await controller.startProfiling(s as never);
  fake.onCustomEvent.fire({ session: s, event: 'profilingStopped', body: { reason: 'exited', message: 'Process 4242 exited.', ...SUMMARY } });
  assert.deepEqual(fake.output.get('dapprof')!.slice(3), ['Profiling of "app.py" stopped (exited): 500 samples in 5.0 s, 2 dropped.', 'Process 4242 exited.', ...topFunctionsTable(SUMMARY), '']);
});
