// The flame graph's "Hide debugger" view: each stack below its last debugger frame (the frames
// the daemon marks origin "debugger"), maintained incrementally like the full trees and equal to
// a naive filter-then-aggregate.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEBUGGER_FUNCTION, GroupBy, ProfileModel } from '../../src/model/profile';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { flattenModelStats, flattenModelTree, readStream, referenceAggregate, sortedEntries } from '../support/reference';
import { randomStream } from '../support/streams';

const GROUPINGS: GroupBy[] = ['line', 'function'];

/** The model against the reference with the debugger hidden, in every thread view and grouping. */
function assertHiddenLikeReference(m: ProfileModel, stream: ProfilingDataBody[], what: string): void {
  for (const groupBy of GROUPINGS) {
    const ref = referenceAggregate(stream, groupBy, { hideDebugger: true });
    for (const [view, tree] of ref.trees) {
      const thread = view === 'all' ? undefined : Number(view);
      assert.deepEqual(sortedEntries(flattenModelTree(m, groupBy, thread, true)), sortedEntries(tree), `${what} ${groupBy} ${view}: tree`);
      const stats = new Map([...ref.stats.get(view)!].filter(([, v]) => v.total > 0));
      assert.deepEqual(sortedEntries(flattenModelStats(m, groupBy, thread, true)), sortedEntries(stats), `${what} ${groupBy} ${view}: table`);
    }
  }
}

test("the daemon's origin alone says what is the debugger's: not the paths", () => {
  const m = new ProfileModel();
  const dist = '/usr/lib/python3/dist-packages/debugpy';
  m.addBatch({
    newFrames: {
      '1': { file: `${dist}/server/cli.py`, line: 1, function: 'run_file', origin: 'debugger' },
      '2': { file: '/app/main.py', line: 2, function: 'main' },
      // Paths of debugpy's, but not marked: the program's (say, a vendored copy it runs itself).
      '3': { file: `${dist}/_vendored/pydevd/pydevd.py`, line: 3, function: 'unmarked', origin: 'program' },
      '4': { file: '', line: 0, function: 'PyEval', native: true, module: `${dist}/_vendored/pydevd/ext.so` },
      // A frame marked the debugger's wherever it lives.
      '5': { file: '/opt/hooks.py', line: 5, function: 'hook', origin: 'debugger' },
    },
    samples: [[1, 2], [1, 3, 4], [2, 5], [2, 5, 4]],
    sampleCount: 4,
    duration: 40,
  });
  const roots = [...m.tree('function', undefined, true)!.root.children!.values()].map((n) => [m.keyInfo('function', n.key).function, n.total]);
  assert.deepEqual(roots.sort(), [
    [DEBUGGER_FUNCTION, 2],
    ['main', 1],
    ['unmarked', 1],
  ]);
});

test('hiding the debugger equals filtering each stack, then aggregating, over random streams', () => {
  for (const seed of [31, 32, 33, 34]) {
    const stream = randomStream(seed, 40, { debugger: true, withThreads: seed !== 34 });
    // From the start; and enabled half-way (built from the full line trees, then incremental).
    const early = new ProfileModel();
    early.tree('line', undefined, true);
    const late = new ProfileModel();
    stream.forEach((b, i) => {
      early.addBatch(b);
      late.addBatch(b);
      if (i === 20) late.tree('function', undefined, true);
    });
    assertHiddenLikeReference(early, stream, `seed ${seed} from the start`);
    assertHiddenLikeReference(late, stream, `seed ${seed} half-way`);
    // The full trees are untouched by the hidden view.
    for (const groupBy of GROUPINGS) {
      const ref = referenceAggregate(stream, groupBy);
      assert.deepEqual(sortedEntries(flattenModelTree(late, groupBy)), sortedEntries(ref.trees.get('all')!), `seed ${seed} ${groupBy}: full tree`);
    }
    // Every sample is somewhere: the hidden root counts them all.
    assert.equal(late.tree('line', undefined, true)!.root.total, late.totals.sampleCount);
    const debuggerOnly = referenceAggregate(stream, 'function', { hideDebugger: true }).trees.get('all')!.get(`${DEBUGGER_FUNCTION}|||`);
    assert.ok(debuggerOnly && debuggerOnly.total > 0, `seed ${seed}: the stream has samples in the debugger alone`);
  }
});

test("a recorded debugpy session's stacks start at the program's code once the debugger is hidden", () => {
  const stream = readStream('live-stream.jsonl');
  const m = new ProfileModel();
  for (const b of stream) m.addBatch(b);
  assertHiddenLikeReference(m, stream, 'live-stream');
  const roots = (thread?: number) =>
    [...(m.tree('function', thread, true)!.root.children?.values() ?? [])].map((n) => {
      const info = m.keyInfo('function', n.key);
      return `${info.function} ${info.file.replace(/.*\//, '')}`;
    });
  const byName = new Map(m.threadList().map((t) => [t.info?.name, t.id]));
  // The main thread runs the module (not runpy's or debugpy's launcher); the worker thread
  // starts in threading's bootstrap (not pydevd's thread wrapper). Samples in the debugger's
  // hooks, called from the program's code, are the debugger's: one node of their own.
  const debuggerNode = `${DEBUGGER_FUNCTION} `;
  assert.deepEqual(roots(byName.get('MainThread')).filter((r) => r !== debuggerNode), ['<module> live-app.py']);
  assert.deepEqual(roots(byName.get('hasher')).filter((r) => r !== debuggerNode), ['Thread._bootstrap threading.py']);
  const inDebugger = [...m.tree('function', undefined, true)!.root.children!.values()].find((n) => m.keyInfo('function', n.key).function === DEBUGGER_FUNCTION);
  assert.ok(!inDebugger || inDebugger.total < m.totals.sampleCount / 10, 'the debugger itself takes a small share of this program');
  // Nothing of the debugger is left in the tree.
  const walk = (n: any): void => {
    if (n.parent) assert.notEqual(m.frames[n.key].origin, 'debugger', m.keyInfo('line', n.key).file);
    for (const c of n.children?.values() ?? []) walk(c);
  };
  walk(m.tree('line', undefined, true)!.root);
  assert.ok(roots().every((r) => !r.includes('runpy') && !r.includes('debugpy')));
});
