// Frame map, stack reconstruction and incremental aggregation of the profile model.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GroupBy, KeyInfo, ProfileModel, UNKNOWN_THREAD } from '../../src/model/profile';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { flattenModelStats, flattenModelTree, fromStacks, readStream, referenceAggregate, sortedEntries, toStacks } from '../support/reference';
import { mulberry32, randomStream, repetitiveStream } from '../support/streams';

// The two consecutive events of docs/PROFILING.md.
const DOC_EVENTS: ProfilingDataBody[] = [
  {
    newFrames: {
      '6353756054696338': { file: '/app/main.py', line: 25, function: '<module>' },
      '8504641672448434': { file: '/app/main.py', line: 10, function: 'main' },
      '255130820545678': { file: '/app/utils.py', line: 42, function: 'calc' },
      '7149781390200571': { file: '/app/main.py', line: 18, function: 'worker' },
    },
    samples: [[6353756054696338, 8504641672448434, 255130820545678], [6353756054696338, 8504641672448434], [7149781390200571]],
    sampleCount: 3,
    duration: 100.2,
    threadIds: [4242, 4242, 4250],
    threads: {
      '4242': { name: 'MainThread', osThreadId: 4242, pid: 4242, pythonThreadId: '140737352595264' },
      '4250': { name: 'Thread-1 (worker)', osThreadId: 4250, pid: 4242, pythonThreadId: '140737331603136' },
    },
    droppedSampleCount: 0,
    errorCount: 0,
  },
  {
    newFrames: { '92098187096770': { file: '', line: 0, function: 'time.sleep', native: true, module: '/usr/lib/python3.12/lib-dynload/time.so' } },
    samples: [[6353756054696338, 8504641672448434], [7149781390200571, 92098187096770]],
    sampleCount: 2,
    duration: 99.8,
    threadIds: [4242, 4250],
    threads: {},
    droppedSampleCount: 0,
    errorCount: 1,
  },
];

function pathTotals(model: ProfileModel, groupBy: GroupBy, thread?: number, label = (i: KeyInfo) => i.function): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  const tree = model.tree(groupBy, thread)!;
  const walk = (n: typeof tree.root, p: string[]) => {
    if (n.parent) out[p.join(' > ')] = [n.total, n.self];
    if (n.children) for (const c of n.children.values()) walk(c, [...p, label(model.keyInfo(groupBy, c.key))]);
  };
  walk(tree.root, []);
  return out;
}

test('rebuilds the stacks of the documented events from frame IDs, root first, per thread', () => {
  const m = new ProfileModel();
  for (const e of DOC_EVENTS) m.addBatch(e);
  assert.deepEqual(pathTotals(m, 'line'), {
    '<module>': [3, 0],
    '<module> > main': [3, 2],
    '<module> > main > calc': [1, 1],
    worker: [2, 1],
    'worker > time.sleep': [1, 1],
  });
  assert.deepEqual(pathTotals(m, 'line', 4250), { worker: [2, 1], 'worker > time.sleep': [1, 1] });
  assert.equal(m.tree('line')!.root.total, 5);
  assert.equal(m.totals.sampleCount, 5);
  assert.equal(m.totals.errorCount, 1);
  assert.equal(Math.round(m.totals.duration * 10), 2000);
  assert.deepEqual(
    m.threadList().map((t) => [t.id, t.info?.name, t.samples]),
    [
      [4242, 'MainThread', 3],
      [4250, 'Thread-1 (worker)', 2],
    ],
  );
  const sleep = m.lineInfos.find((i) => i.function === 'time.sleep')!;
  assert.equal(sleep.native, true);
  assert.equal(sleep.module, '/usr/lib/python3.12/lib-dynload/time.so');
  assert.equal(m.totals.unknownFrameRefs, 0);
});

test('frame IDs up to 2^53 - 1 stay distinct', () => {
  const m = new ProfileModel();
  const a = Number.MAX_SAFE_INTEGER, b = Number.MAX_SAFE_INTEGER - 1;
  m.addBatch({ newFrames: { [a]: { file: 'a.py', line: 1, function: 'a' }, [b]: { file: 'b.py', line: 1, function: 'b' } }, samples: [[a, b], [b]], sampleCount: 2, duration: 10 });
  assert.deepEqual(pathTotals(m, 'line'), { a: [1, 0], 'a > b': [1, 1], b: [1, 1] });
  assert.deepEqual([...m.byThread.keys()], [UNKNOWN_THREAD]);
});

test('an ID referenced before it is announced is shown, not dropped, and counted', () => {
  const m = new ProfileModel();
  m.addBatch({ newFrames: { '1': { file: 'a.py', line: 1, function: 'a' } }, samples: [[1, 2]], sampleCount: 1, duration: 10, threadIds: [7], threads: {} });
  assert.equal(m.totals.unknownFrameRefs, 1);
  assert.deepEqual(pathTotals(m, 'line'), { a: [1, 0], 'a > <unknown frame 2>': [1, 1] });
});

test('group by function merges the lines of a function; recursion counts once in totals', () => {
  const m = new ProfileModel();
  m.addBatch({
    newFrames: {
      '1': { file: 'm.py', line: 1, function: 'main' },
      '2': { file: 'm.py', line: 10, function: 'f' },
      '3': { file: 'm.py', line: 12, function: 'f' },
      '4': { file: 'other.py', line: 12, function: 'f' },
    },
    samples: [[1, 2], [1, 3], [1, 3, 3], [1, 4]],
    sampleCount: 4,
    duration: 40,
  });
  const label = (i: KeyInfo) => `${i.function}@${i.file}`;
  assert.deepEqual(pathTotals(m, 'function', undefined, label), {
    'main@m.py': [4, 0],
    'main@m.py > f@m.py': [3, 2],
    'main@m.py > f@m.py > f@m.py': [1, 1],
    'main@m.py > f@other.py': [1, 1],
  });
  const fnRows = m.table('function', undefined, 'total');
  const f = fnRows.find((r) => r.info.function === 'f' && r.info.file === 'm.py')!;
  assert.equal(f.total, 3, 'the recursive sample counts once');
  assert.equal(f.self, 3);
  assert.equal(f.info.line, 10, 'a function opens at its first line seen');
  const lineRows = m.table('line', undefined, 'self');
  assert.deepEqual(lineRows.slice(0, 2).map((r) => [r.info.line, r.self, r.total]), [
    [12, 2, 2],
    [10, 1, 1],
  ]);
  // main > f (other.py) is a separate child
  const tree = m.tree('function')!;
  assert.equal(tree.root.children!.size, 1);
  assert.equal([...tree.root.children!.values()][0].children!.size, 2);
});

for (const groupBy of ['line', 'function'] as GroupBy[]) {
  test(`incremental aggregation equals a from-scratch aggregation over random streams (group by ${groupBy})`, () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const stream = randomStream(seed, 40, { withThreads: seed !== 5 });
      const ref = referenceAggregate(stream, groupBy);
      const m = new ProfileModel();
      // Function trees enabled half-way: built from the line trees, then maintained incrementally.
      stream.forEach((b, i) => {
        m.addBatch(b);
        if (i === 20) m.tree(groupBy);
      });
      for (const [view, tree] of ref.trees) {
        const thread = view === 'all' ? undefined : Number(view);
        assert.deepEqual(sortedEntries(flattenModelTree(m, groupBy, thread)), sortedEntries(tree), `seed ${seed} view ${view}: tree`);
        assert.deepEqual(sortedEntries(flattenModelStats(m, groupBy, thread)), sortedEntries(new Map([...ref.stats.get(view)!].filter(([, v]) => v.total > 0))), `seed ${seed} view ${view}: table`);
      }
      // One big batch gives the same as forty small ones.
      const merged: ProfilingDataBody = {
        newFrames: Object.assign({}, ...stream.map((b) => b.newFrames)),
        samples: stream.flatMap((b) => b.samples),
        sampleCount: stream.reduce((a, b) => a + b.sampleCount, 0),
        duration: stream.reduce((a, b) => a + b.duration, 0),
        threadIds: seed !== 5 ? stream.flatMap((b) => b.threadIds!) : undefined,
        threads: Object.assign({}, ...stream.map((b) => b.threads ?? {})),
      };
      const one = new ProfileModel();
      one.addBatch(merged);
      assert.deepEqual(sortedEntries(flattenModelTree(one, groupBy)), sortedEntries(flattenModelTree(m, groupBy)));
      assert.equal(m.totals.sampleCount, merged.sampleCount);
    }
  });
}

test('the fixture streams aggregate like the reference, in every view', () => {
  for (const name of ['synthetic-stream.jsonl', 'encoder-stream.jsonl', 'live-stream.jsonl']) {
    const stream = readStream(name);
    for (const groupBy of ['line', 'function'] as GroupBy[]) {
      const ref = referenceAggregate(stream, groupBy);
      const m = new ProfileModel();
      for (const b of stream) m.addBatch(b);
      for (const [view, tree] of ref.trees) {
        const thread = view === 'all' ? undefined : Number(view);
        assert.deepEqual(sortedEntries(flattenModelTree(m, groupBy, thread)), sortedEntries(tree), `${name} ${groupBy} ${view}`);
      }
    }
  }
});

test('the fixture streams sent with stacks aggregate exactly as sent with frame IDs', () => {
  const streams: Array<[string, ProfilingDataBody[], ProfilingDataBody[]]> = [
    ...['synthetic-stream.jsonl', 'encoder-stream.jsonl', 'live-stream.jsonl'].map((n): [string, ProfilingDataBody[], ProfilingDataBody[]] => [n, readStream(n), toStacks(readStream(n))]),
    ['random', randomStream(7, 30), toStacks(randomStream(7, 30))],
    // Recorded from the daemon itself, with stacks: against its own samples spelled out.
    ...['encoder-stacks-stream.jsonl', 'live-stacks-stream.jsonl'].map((n): [string, ProfilingDataBody[], ProfilingDataBody[]] => [n, fromStacks(readStream(n)), readStream(n)]),
  ];
  for (const [name, full, compact] of streams) {
    assert.ok(compact.some((b) => (b.stackIds?.length ?? 0) > 0), name);
    for (const groupBy of ['line', 'function'] as GroupBy[]) {
      const a = new ProfileModel();
      const b = new ProfileModel();
      for (const body of full) a.addBatch(body);
      for (const body of compact) b.addBatch(body);
      for (const hide of [false, true]) {
        assert.deepEqual(sortedEntries(flattenModelTree(b, groupBy, undefined, hide)), sortedEntries(flattenModelTree(a, groupBy, undefined, hide)), `${name} ${groupBy}`);
        for (const t of a.threadList()) assert.deepEqual(sortedEntries(flattenModelTree(b, groupBy, t.id, hide)), sortedEntries(flattenModelTree(a, groupBy, t.id, hide)), `${name} ${groupBy} ${t.id}`);
      }
      assert.deepEqual(b.threadList(), a.threadList(), name);
      assert.deepEqual(b.totals, a.totals, name);
    }
  }
});

test('adding a batch costs in proportion to the batch, not to the samples before it', () => {
  // Samples are counted per distinct stack (stacks.ts); reading the tree then adds each distinct
  // (thread, stack) of the batch once: walking from its leaf to the root (depth + 1 nodes), or,
  // when that would visit more nodes than the tree has, adding to the leaves and recomputing the
  // totals in two passes over the nodes. Either way at most about the walk, however many samples
  // came before. Measured by instrumenting the tree, not by timing.
  const m = new ProfileModel();
  const stream = randomStream(21, 200);
  let visits = 0;
  const tree = m.tree('line')!;
  const addAt = tree.addAt.bind(tree);
  tree.addAt = (node, w) => {
    visits += node.depth + 1;
    addAt(node, w);
  };
  const recompute = tree.recomputeTotals.bind(tree);
  tree.recomputeTotals = () => {
    visits += 2 * tree.nodeCount;
    recompute();
  };
  for (const b of stream) {
    visits = 0;
    m.addBatch(b);
    assert.equal(visits, 0, 'addBatch only counts');
    m.tree('line');
    const distinct = new Map<string, number>();
    b.samples.forEach((s, i) => distinct.set(`${b.threadIds![i]}:${s.join(',')}`, s.length + 1));
    const walk = [...distinct.values()].reduce((a, n) => a + n, 0);
    // The new nodes of a batch (at most the walk) are recomputed too.
    assert.ok(visits <= 3 * walk, `${visits} node visits for a walk of ${walk}`);
    if (walk > 0) assert.ok(visits > 0);
  }
});

test('identical stacks of different threads stay apart; a stack seen again is counted again', () => {
  const m = new ProfileModel();
  const frames = { '1': { file: 'a.py', line: 1, function: 'a' }, '2': { file: 'b.py', line: 2, function: 'b' } };
  m.addBatch({ newFrames: frames, samples: [[1, 2], [1, 2], [1]], sampleCount: 3, duration: 10, threadIds: [7, 8, 7], threads: {} });
  assert.deepEqual(pathTotals(m, 'line', 7), { a: [2, 1], 'a > b': [1, 1] });
  assert.deepEqual(pathTotals(m, 'line', 8), { a: [1, 0], 'a > b': [1, 1] });
  // Read in between, then more of the same: the trees and the table add up.
  m.addBatch({ newFrames: {}, samples: [[1, 2], [2, 1, 2]], sampleCount: 2, duration: 10, threadIds: [8, 8], threads: {} });
  assert.deepEqual(pathTotals(m, 'line', 8), { a: [2, 0], 'a > b': [2, 2], b: [1, 0], 'b > a': [1, 0], 'b > a > b': [1, 1] });
  assert.deepEqual(pathTotals(m, 'function'), { a: [4, 1], 'a > b': [3, 3], b: [1, 0], 'b > a': [1, 0], 'b > a > b': [1, 1] });
  const rows = m.table('function', undefined, 'total').map((r) => [r.info.function, r.self, r.total]);
  assert.deepEqual(rows, [
    ['a', 1, 5],
    ['b', 4, 4],
  ]);
  assert.deepEqual(m.threadList().map((t) => [t.id, t.samples]), [
    [8, 3],
    [7, 2],
  ]);
});

test('repeated stacks, with reads in between: every view equals the reference, sent with frame IDs or with stacks', () => {
  for (const seed of [41, 42, 43]) {
    for (const compact of [false, true]) {
      const sent = repetitiveStream(seed, 60, { lateFrames: seed === 43 });
      const stream = compact ? toStacks(sent) : sent;
      const all = sent.flatMap((b) => b.samples.map((st, i) => `${b.threadIds![i]}:${st.join(',')}`));
      assert.ok(new Set(all).size * 4 < all.length, `seed ${seed}: stacks repeat`);
      const rnd = mulberry32(seed);
      const m = new ProfileModel();
      // Reads between batches, in random views: each brings the trees up to date (or builds the
      // function trees, or the ones without the debugger, from what came before).
      stream.forEach((b) => {
        m.addBatch(b);
        if (rnd() < 0.3) m.tree(rnd() < 0.5 ? 'line' : 'function', rnd() < 0.5 ? undefined : 202, rnd() < 0.5);
      });
      for (const hideDebugger of [false, true])
        for (const groupBy of ['line', 'function'] as GroupBy[]) {
          const ref = referenceAggregate(stream, groupBy, { hideDebugger });
          for (const [view, tree] of ref.trees) {
            const what = `seed ${seed} ${compact ? 'stacks' : 'frame IDs'} ${groupBy} debugger ${hideDebugger ? 'hidden' : 'shown'} view ${view}`;
            const thread = view === 'all' ? undefined : Number(view);
            assert.deepEqual(sortedEntries(flattenModelTree(m, groupBy, thread, hideDebugger)), sortedEntries(tree), `${what}: tree`);
            const stats = new Map([...ref.stats.get(view)!].filter(([, v]) => v.total > 0));
            assert.deepEqual(sortedEntries(flattenModelStats(m, groupBy, thread, hideDebugger)), sortedEntries(stats), `${what}: table`);
          }
        }
      assert.equal(m.totals.sampleCount, sent.reduce((a, b) => a + b.samples.length, 0));
      assert.deepEqual(m.threadList().map((t) => t.samples).reduce((a, n) => a + n, 0), m.totals.sampleCount);
    }
  }
});
