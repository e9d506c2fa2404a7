// The model's differential profile (model/diff.ts) against the naive reference: each root path's
// share of all samples in the current and the baseline profile, and their difference; on random
// streams (frame IDs differ between the two runs, so paths are matched by their frames) and a
// recorded one against a prefix of itself.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diffTrees } from '../../src/model/diff';
import { GroupBy, ProfileModel } from '../../src/model/profile';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { readStream, referenceDiff } from '../support/reference';
import { randomStream } from '../support/streams';

function modelOf(bodies: ProfilingDataBody[]): ProfileModel {
  const m = new ProfileModel();
  for (const b of bodies) m.addBatch(b);
  return m;
}

function check(current: ProfilingDataBody[], baseline: ProfilingDataBody[], groupBy: GroupBy): number {
  const c = modelOf(current), b = modelOf(baseline);
  const d = diffTrees(c.tree(groupBy, undefined, true), (k) => c.keyInfo(groupBy, k), b.tree(groupBy, undefined, true), (k) => b.keyInfo(groupBy, k), groupBy === 'function');
  const got = new Map<string, { current: number; baseline: number; delta: number }>();
  for (const r of d.rows) {
    const k = r.names.join(' > ');
    const g = got.get(k) ?? { current: 0, baseline: 0, delta: 0 };
    got.set(k, { current: g.current + r.current, baseline: g.baseline + r.baseline, delta: g.delta + r.delta });
  }
  const want = referenceDiff(current, baseline, groupBy);
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort());
  for (const [k, w] of want) {
    const g = got.get(k)!;
    for (const f of ['current', 'baseline', 'delta'] as const) assert.ok(Math.abs(g[f] - w[f]) < 1e-9, `${groupBy} ${k} ${f}: ${g[f]} vs ${w[f]}`);
  }
  for (let i = 1; i < d.rows.length; i++) assert.ok(Math.abs(d.rows[i - 1].delta) >= Math.abs(d.rows[i].delta), 'rows by |change|');
  return [...want.values()].filter((w) => Math.abs(w.delta) > 1e-6).length;
}

test('diff of two random runs equals the reference, by function and by line', () => {
  for (const groupBy of ['function', 'line'] as const) {
    const changed = check(randomStream(7, 30, { withThreads: true, debugger: true }), randomStream(8, 20, { withThreads: true, debugger: true }), groupBy);
    assert.ok(changed > 10, `${groupBy}: paths changed (${changed})`);
  }
});

test('diff of a recorded run against its first half; against itself nothing changed', () => {
  const live = readStream('live-stream.jsonl');
  assert.ok(check(live, live.slice(0, Math.ceil(live.length / 2)), 'function') > 0);
  const m = modelOf(live), n = modelOf(live);
  const d = diffTrees(m.tree('line'), (k) => m.keyInfo('line', k), n.tree('line'), (k) => n.keyInfo('line', k), false);
  assert.ok(d.rows.length > 0);
  for (const r of d.rows) assert.equal(r.delta, 0);
  const none = diffTrees(m.tree('function'), (k) => m.keyInfo('function', k), undefined, () => undefined as never, true);
  for (const r of none.rows) assert.equal(r.delta, r.current);
});
