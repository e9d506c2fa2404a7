// A deliberately naive aggregation of profilingData bodies, written straight from
// docs/PROFILING.md, as the reference the incremental model is compared with.

import { existsSync, readFileSync } from 'fs';
import { dirname, join } from 'path';
import { CallNode, DEBUGGER_FUNCTION, GroupBy, ProfileModel, ViewOptions } from '../../src/model/profile';
import type { Frame, ProfilingDataBody } from '../../src/model/protocol';

/** The vscode-client folder: the nearest folder above this file holding package.json. */
export const clientRoot = (() => {
  let d = __dirname;
  while (!existsSync(join(d, 'package.json'))) {
    const up = dirname(d);
    if (up === d) throw new Error('package.json not found above ' + __dirname);
    d = up;
  }
  return d;
})();
export const repoRoot = join(clientRoot, '..');

export function readStream(name: string): ProfilingDataBody[] {
  return readFileSync(join(clientRoot, 'test', 'fixtures', name), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as ProfilingDataBody);
}

export interface RefNode {
  total: number;
  self: number;
}

export function keyOf(f: Frame, groupBy: GroupBy): string {
  // A task's frames in one state are one function; in another state, another.
  if (f.task !== undefined) return groupBy === 'line' ? `${f.function}|task ${f.task}|0||` : `${f.function}|task ${f.task}||`;
  return groupBy === 'line'
    ? `${f.function}|${f.file}|${f.line}|${f.native ? 'n' : ''}|${f.module ?? ''}`
    : `${f.function}|${f.file}|${f.native ? 'n' : ''}|${f.native ? f.module ?? '' : ''}`;
}

/**
 * What the flame graph shows of a stack with the debugger hidden: the frames below its last
 * debugger frame (origin "debugger", as the daemon marks them); one DEBUGGER_FUNCTION frame when
 * only native frames (or none) follow it.
 */
export function programStack(stack: Frame[]): Frame[] {
  let last = -1;
  stack.forEach((f, i) => {
    if (f.origin === 'debugger') last = i;
  });
  const rest = stack.slice(last + 1);
  if (last >= 0 && rest.every((f) => f.native)) return [{ file: '', line: 0, function: DEBUGGER_FUNCTION }];
  return rest;
}

/**
 * What the "By task" view shows of a stack: the frames from its outermost task frame (a frame with
 * `task`) on; a stack without one as it is.
 */
export function taskStack(stack: Frame[]): Frame[] {
  const first = stack.findIndex((f) => f.task !== undefined);
  return first < 0 ? stack : stack.slice(first);
}

/** A waiting task's sample: its innermost task frame's state is not "running". */
export function isWaiting(stack: Frame[]): boolean {
  const inner = [...stack].reverse().find((f) => f.task !== undefined);
  return inner !== undefined && inner.task !== 'running';
}

/** The options of a view, as the reference applies them. */
export interface RefView {
  hideDebugger?: boolean;
  byTask?: boolean;
  waiting?: 'include' | 'exclude' | 'only';
  range?: RefRange;
}

/** The stack a view shows of a sample, or undefined when it leaves the sample out. */
export function viewStack(sampled: Frame[], opts: RefView): Frame[] | undefined {
  if (opts.waiting === 'exclude' && isWaiting(sampled)) return undefined;
  if (opts.waiting === 'only' && !isWaiting(sampled)) return undefined;
  let stack = opts.hideDebugger ? programStack(sampled) : sampled;
  if (opts.byTask) stack = taskStack(stack);
  return stack;
}

/**
 * A stream as a run started with `stacks` sends it, from the same samples sent as frame IDs: by
 * docs/PROFILING.md's rules (stack IDs 0, 1, ... in order of first use, each announced in the
 * event that first uses it; consecutive samples of one thread and stack as one run).
 */
export function toStacks(bodies: ProfilingDataBody[]): ProfilingDataBody[] {
  const ids = new Map<string, number>();
  return bodies.map((body) => {
    const { samples, threadIds, ...rest } = body;
    const out: ProfilingDataBody = { ...rest, newStacks: {}, samples: [], stackIds: [], stackCounts: [], threadIds: [] };
    samples.forEach((stack, i) => {
      const key = stack.join(',');
      let id = ids.get(key);
      if (id === undefined) {
        ids.set(key, (id = ids.size));
        out.newStacks![String(id)] = stack;
      }
      const tid = threadIds?.[i] ?? -1;
      const last = out.stackIds!.length - 1;
      if (last >= 0 && out.stackIds![last] === id && out.threadIds![last] === tid) out.stackCounts![last]++;
      else {
        out.stackIds!.push(id);
        out.stackCounts!.push(1);
        out.threadIds!.push(tid);
      }
    });
    if (threadIds === undefined) delete out.threadIds;
    return out;
  });
}

/** The samples of a `stacks` stream spelled out as frame IDs, as the reader of the docs would. */
export function fromStacks(bodies: ProfilingDataBody[]): ProfilingDataBody[] {
  const stacks = new Map<number, number[]>();
  return bodies.map((body) => {
    if (body.stackIds === undefined) return body;
    for (const [id, stack] of Object.entries(body.newStacks ?? {})) stacks.set(Number(id), stack);
    const { newStacks: _n, stackIds, stackCounts, threadIds, ...rest } = body;
    const out: ProfilingDataBody = { ...rest, samples: [] };
    if (threadIds) out.threadIds = [];
    stackIds.forEach((id, i) => {
      for (let n = 0; n < stackCounts![i]; n++) {
        out.samples.push(stacks.get(id)!);
        if (threadIds) out.threadIds!.push(threadIds[i]);
      }
    });
    return out;
  });
}

/** Path string -> totals, per thread ('all' for all threads), and per-key self/total. */
export function referenceAggregate(bodies: ProfilingDataBody[], groupBy: GroupBy, opts: RefView = {}) {
  const times = opts.range ? sampleTimes(bodies) : undefined;
  bodies = fromStacks(bodies);
  const frames = new Map<number, Frame>();
  const trees = new Map<string, Map<string, RefNode>>();
  const stats = new Map<string, Map<string, RefNode>>();
  const bump = (m: Map<string, RefNode>, k: string, total: number, self: number) => {
    const n = m.get(k) ?? { total: 0, self: 0 };
    n.total += total;
    n.self += self;
    m.set(k, n);
  };
  bodies.forEach((body, bi) => {
    for (const [id, frame] of Object.entries(body.newFrames)) frames.set(Number(id), frame);
    body.samples.forEach((stack, i) => {
      if (opts.range && !inRange(opts.range, times![bi][i])) return;
      const tid = body.threadIds ? String(body.threadIds[i]) : '-1';
      const shown = viewStack(
        stack.map((id) => frames.get(id)!),
        opts,
      );
      if (shown === undefined) return;
      const keys = shown.map((f) => keyOf(f, groupBy));
      for (const view of ['all', tid]) {
        if (!trees.has(view)) trees.set(view, new Map());
        if (!stats.has(view)) stats.set(view, new Map());
        const t = trees.get(view)!;
        bump(t, '', 1, keys.length === 0 ? 1 : 0);
        let path = '';
        for (let d = 1; d <= keys.length; d++) {
          path = d === 1 ? keys[0] : `${path} > ${keys[d - 1]}`;
          bump(t, path, 1, d === keys.length ? 1 : 0);
        }
        const s = stats.get(view)!;
        for (const k of new Set(keys)) bump(s, k, 1, 0);
        if (keys.length) bump(s, keys[keys.length - 1], 0, 1);
      }
    });
  });
  return { trees, stats };
}

/** Buckets of a timeline: from `origin`, `width` ms each; a range is the buckets [first, end). */
export interface RefRange {
  origin: number;
  width: number;
  first: number;
  end: number;
}

/**
 * The time of every sample, per body, as docs/PROFILING.md puts them: the samples of an event
 * (spelled out, in order) evenly spaced from its startTime to its endTime.
 */
export function sampleTimes(bodies: ProfilingDataBody[]): number[][] {
  return fromStacks(bodies).map((b) => {
    const n = b.samples.length;
    const t0 = b.startTime ?? b.endTime!, t1 = b.endTime ?? t0;
    return b.samples.map((_, j) => (n > 1 ? t0 + (j * (t1 - t0)) / (n - 1) : t0));
  });
}

function bucketOf(r: { origin: number; width: number }, t: number): number {
  return Math.max(0, Math.floor((t - r.origin) / r.width));
}

function inRange(r: RefRange, t: number): boolean {
  const b = bucketOf(r, t);
  return b >= r.first && b < r.end;
}

/** Samples per bucket, of all threads ('all') or of each thread, one sample at a time. */
export function referenceTimeline(bodies: ProfilingDataBody[], origin: number, width: number): Map<string, number[]> {
  const times = sampleTimes(bodies);
  const out = new Map<string, number[]>();
  fromStacks(bodies).forEach((body, bi) =>
    body.samples.forEach((_, i) => {
      const b = bucketOf({ origin, width }, times[bi][i]);
      for (const view of ['all', body.threadIds ? String(body.threadIds[i]) : '-1']) {
        const counts = out.get(view) ?? [];
        while (counts.length <= b) counts.push(0);
        counts[b]++;
        out.set(view, counts);
      }
    }),
  );
  return out;
}

/** The same shape, read from a model's tree. */
export function flattenModelTree(model: ProfileModel, groupBy: GroupBy, thread?: number, view: boolean | ViewOptions = false): Map<string, RefNode> {
  const out = new Map<string, RefNode>();
  const tree = model.tree(groupBy, thread, view)!;
  const keyName = (n: CallNode) => keyOf(model.keyInfo(groupBy, n.key) as Frame, groupBy);
  const walk = (n: CallNode, path: string) => {
    out.set(path, { total: n.total, self: n.self });
    if (n.children) for (const c of n.children.values()) walk(c, path === '' ? keyName(c) : `${path} > ${keyName(c)}`);
  };
  walk(tree.root, '');
  return out;
}

export function flattenModelStats(model: ProfileModel, groupBy: GroupBy, thread?: number, view: boolean | ViewOptions = false): Map<string, RefNode> {
  const out = new Map<string, RefNode>();
  for (const r of model.table(groupBy, thread, 'total', Infinity, view)) out.set(keyOf(r.info as Frame, groupBy), { total: r.total, self: r.self });
  return out;
}

export function sortedEntries(m: Map<string, RefNode>): Array<[string, RefNode]> {
  return [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/**
 * Per source line and per function of each file, read naively from the samples: own is a
 * sample whose leaf is on the line (in the function), total a sample with the line (function)
 * anywhere on its stack, once however often. Python frames only; `thread` filters the samples.
 */
export function referenceSourceHeat(bodies: ProfilingDataBody[], opts: { thread?: number; hideDebugger?: boolean; waiting?: 'exclude' | 'only' } = {}) {
  bodies = fromStacks(bodies);
  const frames = new Map<number, Frame>();
  const lines = new Map<string, RefNode>();
  const funcs = new Map<string, RefNode>();
  let sampleCount = 0;
  const bump = (m: Map<string, RefNode>, k: string, total: number, self: number) => {
    const n = m.get(k) ?? { total: 0, self: 0 };
    n.total += total;
    n.self += self;
    m.set(k, n);
  };
  for (const body of bodies) {
    for (const [id, frame] of Object.entries(body.newFrames)) frames.set(Number(id), frame);
    body.samples.forEach((ids, i) => {
      const tid = body.threadIds ? body.threadIds[i] : -1;
      if (opts.thread !== undefined && tid !== opts.thread) return;
      const sampled = ids.map((id) => frames.get(id)!);
      const stack = viewStack(sampled, { hideDebugger: opts.hideDebugger, waiting: opts.waiting });
      if (stack === undefined) return;
      sampleCount++;
      const python = (f: Frame) => !f.native && f.file !== '';
      for (const k of new Set(stack.filter((f) => python(f) && f.line > 0).map((f) => `${f.file}:${f.line}`))) bump(lines, k, 1, 0);
      for (const k of new Set(stack.filter(python).map((f) => `${f.file}:${f.function}`))) bump(funcs, k, 1, 0);
      const leaf = stack[stack.length - 1];
      if (leaf && python(leaf)) {
        if (leaf.line > 0) bump(lines, `${leaf.file}:${leaf.line}`, 0, 1);
        bump(funcs, `${leaf.file}:${leaf.function}`, 0, 1);
      }
    });
  }
  return { sampleCount, lines, funcs };
}

/**
 * A differential profile, naively: each root path's share of all samples in both profiles
 * (paths of function names, summed where names repeat) and their difference.
 */
export function referenceDiff(current: ProfilingDataBody[], baseline: ProfilingDataBody[], groupBy: GroupBy, hideDebugger = true): Map<string, { current: number; baseline: number; delta: number }> {
  const shares = (bodies: ProfilingDataBody[]) => {
    const tree = referenceAggregate(bodies, groupBy, { hideDebugger }).trees.get('all') ?? new Map<string, RefNode>();
    const all = tree.get('')?.total ?? 0;
    const out = new Map<string, number>();
    for (const [path, n] of tree) if (path !== '') out.set(path, n.total / all);
    return out;
  };
  const cur = shares(current), base = shares(baseline);
  const out = new Map<string, { current: number; baseline: number; delta: number }>();
  for (const path of new Set([...cur.keys(), ...base.keys()])) {
    const names = path.split(' > ').map((k) => k.split('|')[0]).join(' > ');
    const r = out.get(names) ?? { current: 0, baseline: 0, delta: 0 };
    r.current += cur.get(path) ?? 0;
    r.baseline += base.get(path) ?? 0;
    r.delta = r.current - r.baseline;
    out.set(names, r);
  }
  return out;
}
