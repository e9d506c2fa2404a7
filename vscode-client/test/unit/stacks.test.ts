// The stack table: one record per distinct (thread, frame IDs), found again by hash, through its
// growth; IDs that differ only in their high bits, or only in their order, stay apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StackTable } from '../../src/model/stacks';
import { mulberry32 } from '../support/streams';

test('each distinct (thread, stack) gets one record, kept through the growth of the table', () => {
  const st = new StackTable();
  const rnd = mulberry32(5);
  const stacks: Array<[number, number[]]> = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < 5000; i++) {
    const tid = [1, 2, -1][Math.floor(rnd() * 3)];
    const ids = Array.from({ length: Math.floor(rnd() * 40) }, () => Math.floor(rnd() * 2 ** 53));
    stacks.push([tid, ids]);
  }
  // Each stack twice, interleaved: the second time finds the first one's record.
  for (const pass of [0, 1])
    for (const [tid, ids] of stacks) {
      const rec = st.intern(tid, ids);
      const key = `${tid}:${ids.join(',')}`;
      if (pass === 0 && !seen.has(key)) {
        assert.equal(st.created, true);
        seen.set(key, rec);
      } else {
        assert.equal(st.created, false);
        assert.equal(rec, seen.get(key));
      }
      assert.equal(st.tid[rec], tid);
      assert.deepEqual(Array.from(st.ids.subarray(st.start[rec], st.start[rec] + st.length[rec])), ids);
    }
  assert.equal(st.size, seen.size);
});

test('IDs alike in their low 32 bits, or the same IDs in another order or thread, are other stacks', () => {
  const st = new StackTable();
  const hi = (n: number) => n * 2 ** 32 + 7; // the same low bits
  const a = st.intern(1, [hi(1), hi(2)]);
  const b = st.intern(1, [hi(2), hi(1)]);
  const c = st.intern(1, [hi(3), hi(2)]);
  const d = st.intern(2, [hi(1), hi(2)]);
  const e = st.intern(1, [hi(1)]);
  const f = st.intern(1, []);
  assert.equal(new Set([a, b, c, d, e, f]).size, 6);
  assert.equal(st.intern(1, [Number.MAX_SAFE_INTEGER]), st.intern(1, [Number.MAX_SAFE_INTEGER]));
  assert.notEqual(st.intern(1, [Number.MAX_SAFE_INTEGER]), st.intern(1, [Number.MAX_SAFE_INTEGER - 1]));
});

test('samples are counted per record and handed over once', () => {
  const st = new StackTable();
  const a = st.intern(1, [10, 11]);
  const b = st.intern(1, [10]);
  st.addSamples(a, 1);
  st.addSamples(b, 2);
  st.addSamples(a, 3);
  st.addSamples(b, 0);
  const got: Array<[number, number]> = [];
  st.deltas.drain((rec, w) => got.push([rec, w]));
  assert.deepEqual(got, [
    [a, 4],
    [b, 2],
  ]);
  st.deltas.drain(() => assert.fail('nothing is pending after a drain'));
  assert.deepEqual([st.count[a], st.count[b]], [4, 2]);
});
