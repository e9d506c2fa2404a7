// A run over several processes (subprocesses): a view of one process holds the samples of all its
// threads, equal to the naive aggregation of those samples alone, whether it is first read at the
// start, in the middle or at the end of the run, in every view of the stacks (the debugger hidden
// or not, by line and by function), and on the timeline.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProfileModel, processKey, processLabel, threadLabel } from '../../src/model/profile';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { flattenModelTree, referenceAggregate, sortedEntries } from '../support/reference';
import { POOL_PID_OF as PID_OF, POOL_COMMANDS as COMMANDS, pooledStream as pooled, randomStream } from '../support/streams';

/** The stream with only the samples of one process's threads. */
function only(bodies: ProfilingDataBody[], pid: number): ProfilingDataBody[] {
  return bodies.map((b) => {
    const keep = b.samples.map((_, i) => PID_OF[b.threadIds![i]] === pid);
    return { ...b, samples: b.samples.filter((_, i) => keep[i]), threadIds: b.threadIds!.filter((_, i) => keep[i]), sampleCount: keep.filter(Boolean).length };
  });
}

function check(model: ProfileModel, bodies: ProfilingDataBody[], pid: number, what: string): void {
  for (const groupBy of ['line', 'function'] as const)
    for (const hideDebugger of [false, true]) {
      const want = referenceAggregate(only(bodies, pid), groupBy, { hideDebugger }).trees.get('all') ?? new Map();
      // An empty view is a root of no samples; the reference has nothing for it.
      const got = new Map([...flattenModelTree(model, groupBy, processKey(pid), hideDebugger)].filter(([, n]) => n.total > 0 || n.self > 0));
      assert.deepEqual(sortedEntries(got), sortedEntries(want), `${what}: process ${pid}, ${groupBy}, debugger ${hideDebugger ? 'hidden' : 'shown'}`);
    }
}

test('a process view is the aggregate of its threads\' samples, read first at any point of the run', () => {
  const bodies = pooled(7, 30);
  for (const firstRead of [0, 12, 30]) {
    const model = new ProfileModel();
    bodies.forEach((b, i) => {
      if (i === firstRead) for (const pid of [100, 200, 300]) check(model, bodies.slice(0, i), pid, `read first after ${i} batches`);
      model.addBatch(b);
    });
    for (const pid of [100, 200, 300]) check(model, bodies, pid, `after batches read from ${firstRead}`);
    const all = model.sampleCount(undefined);
    const parts = [100, 200, 300].map((pid) => model.sampleCount(processKey(pid)));
    assert.equal(parts.reduce((a, b) => a + b, 0), all, 'the processes share out every sample');
  }
});

test('the process list: several processes, most samples first, with their threads and command lines; none for one process', () => {
  const bodies = pooled(11, 20);
  const model = ProfileModel.of(bodies);
  const list = model.processList();
  assert.deepEqual(list.map((p) => p.pid).sort(), [100, 200, 300]);
  for (let i = 1; i < list.length; i++) assert.ok(list[i - 1].samples >= list[i].samples);
  const debuggee = list.find((p) => p.pid === 100)!;
  assert.deepEqual([...debuggee.threads].sort(), [101, 102]);
  assert.equal(debuggee.samples, model.sampleCount(processKey(100)));
  assert.equal(threadLabel(debuggee.key, undefined, debuggee.commandLine), 'process 100 (python3 pool.py --workers 2)');
  assert.equal(processLabel(300, ''), 'process 300');
  const long = processLabel(200, COMMANDS[200]);
  assert.ok(long.startsWith('process 200 (python3 -c from multiprocessing.spawn') && long.endsWith('…)') && long.length <= 'process 200 ()'.length + 48, long);

  const single = ProfileModel.of(randomStream(11, 5));
  assert.deepEqual(single.processList(), [], 'one process (or none known): no process level');
});

test('the timeline counts a process\'s threads in each bucket', () => {
  const bodies = pooled(5, 25).map((b, i) => ({ ...b, startTime: 1_000 + i * 100, endTime: 1_000 + i * 100 + 99 }));
  const model = ProfileModel.of(bodies);
  const tl = model.timeline;
  assert.ok(tl.bucketCount > 3);
  for (let b = 0; b < tl.bucketCount; b++) {
    const byThread = [101, 102, 103, 104].map((t) => tl.count(b, t));
    assert.equal(tl.count(b, processKey(100)), byThread[0] + byThread[1]);
    assert.equal(tl.count(b, processKey(200)), byThread[2]);
    assert.equal(tl.count(b, processKey(100)) + tl.count(b, processKey(200)) + tl.count(b, processKey(300)), tl.count(b));
  }
});

test('a process that execs is announced ended, then again with its new command line: it runs, as the new program', () => {
  const model = new ProfileModel();
  const batch = (processes: ProfilingDataBody['processes']): ProfilingDataBody => ({ newFrames: {}, samples: [], sampleCount: 0, duration: 0.1, processes });
  model.addBatch(batch({ 300: { pid: 300, commandLine: 'python3 launcher.py' } }));
  model.addBatch(batch({ 300: { pid: 300, commandLine: 'python3 launcher.py', exited: true } }));
  assert.deepEqual(model.processes.get(300), { pid: 300, commandLine: 'python3 launcher.py', exited: true });
  model.addBatch(batch({ 300: { pid: 300, commandLine: '/venv/bin/python app.py' } }));
  assert.deepEqual(model.processes.get(300), { pid: 300, commandLine: '/venv/bin/python app.py' });
});
