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

export function mulberry32(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A random stream obeying the protocol (one ID per distinct frame): frames announced in the batch that first uses them,
 * random depths (0 included), recursion, shared function names on several lines, threads, and
 * sometimes no threadIds; with `debugger`, frames of debugpy too (Python and compiled, marked
 * origin "debugger" as the daemon marks them), and a program frame whose path merely looks like
 * debugpy's (the client must not judge by paths).
 */
export function randomStream(seed: number, batches: number, opts: { withThreads?: boolean; debugger?: boolean } = {}): ProfilingDataBody[] {
  const rnd = mulberry32(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const pool: Array<[number, Frame]> = [];
  for (let i = 0; i < 40; i++) {
    const native = i % 9 === 8;
    const fn = `fn_${i % 25}`; // same function on several lines / files
    const frame: Frame = native
      ? { file: '', line: 0, function: `native_${i}`, native: true, module: `/usr/lib/lib${i % 2}.so` }
      : { file: `/app/m${i % 4}.py`, line: 1 + (i % 7) * 10, function: fn };
    pool.push([Number.MAX_SAFE_INTEGER - i * 977 - int(500), frame]);
  }
  if (opts.debugger) {
    const pydevd = '/usr/lib/python3/dist-packages/debugpy/_vendored/pydevd';
    for (let i = 0; i < 6; i++) {
      const frame: Frame =
        i === 5
          ? { file: '', line: 0, function: 'trace_dispatch_ext', native: true, module: `${pydevd}/_pydevd_bundle/ext.so`, origin: 'debugger' }
          : { file: `${pydevd}/pydevd${i % 2}.py`, line: 10 + i, function: `dbg_${i % 3}`, origin: 'debugger' };
      pool.push([1_000_003 + i * 7919, frame]);
    }
    pool.push([1_000_901, { file: '/home/me/debugpy/notes.py', line: 3, function: 'looks_like_debugpy' }]);
  }
  const seenIds = new Set<number>();
  const uniquePool = pool.filter(([id]) => (seenIds.has(id) ? false : (seenIds.add(id), true)));
  const announced = new Set<number>();
  const threads = [101, 102, 103, 104];
  const bodies: ProfilingDataBody[] = [];
  for (let b = 0; b < batches; b++) {
    const n = int(60);
    const samples: number[][] = [];
    const threadIds: number[] = [];
    const newFrames: Record<string, Frame> = {};
    for (let s = 0; s < n; s++) {
      const depth = int(12);
      const stack: number[] = [];
      for (let d = 0; d < depth; d++) {
        const [id, frame] = rnd() < 0.2 && stack.length ? uniquePool.find(([i]) => i === stack[stack.length - 1])! : uniquePool[int(uniquePool.length)];
        if (!announced.has(id)) {
          announced.add(id);
          newFrames[String(id)] = frame;
        }
        stack.push(id);
      }
      samples.push(stack);
      threadIds.push(threads[int(threads.length)]);
    }
    const withThreads = opts.withThreads ?? true;
    const body: ProfilingDataBody = { newFrames, samples, sampleCount: n, duration: 100 };
    if (withThreads) {
      body.threadIds = threadIds;
      body.threads = b === 0 ? Object.fromEntries(threads.map((t) => [String(t), { name: `T${t}`, osThreadId: t }])) : {};
    }
    bodies.push(body);
  }
  return bodies;
}

/**
 * A random stream in which a few stacks repeat, as a real program's do (the model interns
 * them and counts repeats): the stacks of a randomStream with the debugger's frames, sampled
 * again and again from several threads, with runs of the same stack; frames announced in the
 * first batch, or (`lateFrames`) in the batch that first uses them.
 */
export function repetitiveStream(seed: number, batches: number, opts: { lateFrames?: boolean } = {}): ProfilingDataBody[] {
  const base = randomStream(seed, 6, { debugger: true });
  const frames: Record<string, Frame> = Object.assign({}, ...base.map((b) => b.newFrames));
  const stacks = base.flatMap((b) => b.samples).slice(0, 24);
  const rnd = mulberry32(seed * 7 + 1);
  const threads = [201, 202, 203];
  const announced = new Set<string>();
  const out: ProfilingDataBody[] = [];
  for (let b = 0; b < batches; b++) {
    const samples: number[][] = [];
    const threadIds: number[] = [];
    const n = Math.floor(rnd() * 80);
    let stack = stacks[0], tid = threads[0];
    for (let s = 0; s < n; s++) {
      // Skewed: the first stacks are sampled most; half the time the previous sample repeats.
      if (rnd() < 0.5) {
        stack = stacks[Math.floor(stacks.length * rnd() * rnd())];
        tid = threads[Math.floor(rnd() * threads.length)];
      }
      samples.push([...stack]);
      threadIds.push(tid);
    }
    const newFrames: Record<string, Frame> = {};
    for (const st of opts.lateFrames ? samples : b === 0 ? stacks : [])
      for (const id of st)
        if (!announced.has(String(id))) {
          announced.add(String(id));
          newFrames[String(id)] = frames[String(id)];
        }
    const body: ProfilingDataBody = { newFrames, samples, sampleCount: n, duration: 100, threadIds };
    body.threads = b === 0 ? Object.fromEntries(threads.map((t) => [String(t), { name: `T${t}`, osThreadId: t }])) : {};
    out.push(body);
  }
  return out;
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

/**
 * A random stream of an asyncio program sampled with async "all" (docs/PROFILING.md): stacks of
 * threads running no task (plain frames); a running task's stacks, `(event loop)` then the tasks
 * that await it (waiting) down to it (running), each task frame followed by its coroutine frames;
 * waiting tasks' stacks of the same shape whose innermost task is waiting, cancelling or of
 * unknown state and ends in asyncio.sleep. Debugger frames too: at the root of some stacks (the
 * thread's start), and in some coroutines (a trace function, sometimes ending in native code), so
 * that hiding the debugger cuts task stacks in both places. Events are stamped with times.
 */
export function taskStream(seed: number, batches: number): ProfilingDataBody[] {
  const rnd = mulberry32(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const frames: Array<[number, Frame]> = [];
  let nextId = 7_000_000_000_001;
  const add = (f: Frame) => {
    const id = nextId;
    nextId += 104_729;
    frames.push([id, f]);
    return id;
  };
  const plain = Array.from({ length: 16 }, (_, i) =>
    add(i % 7 === 6 ? { file: '', line: 0, function: `native_${i}`, native: true, module: '/usr/lib/libx.so' } : { file: `/app/a${i % 3}.py`, line: 5 + i, function: `co_${i % 11}` }),
  );
  const dbg = [0, 1].map((i) => add({ file: `/usr/lib/python3/dist-packages/debugpy/_vendored/pydevd/pydevd${i}.py`, line: 30 + i, function: `dbg_${i}`, origin: 'debugger' }));
  const dbgNative = add({ file: '', line: 0, function: 'trace_ext', native: true, module: '/usr/lib/python3/dist-packages/debugpy/ext.so', origin: 'debugger' });
  const loop = add({ file: '', line: 0, function: '(event loop)' });
  const sleep = add({ file: '/usr/lib/python3.12/asyncio/tasks.py', line: 665, function: 'sleep' });
  const STATES = ['running', 'waiting', 'cancelling', 'unknown'] as const;
  const tasks = Array.from({ length: 5 }, (_, t) => Object.fromEntries(STATES.map((state) => [state, add({ file: '', line: 0, function: t === 4 ? 'co_3' : `Task-${t + 1}`, task: state })])) as Record<(typeof STATES)[number], number>);
  const byId = new Map(frames);
  const coroutine = () => Array.from({ length: int(3) }, () => plain[int(plain.length)]);
  const announced = new Set<number>();
  const threads = [301, 302];
  const bodies: ProfilingDataBody[] = [];
  for (let b = 0; b < batches; b++) {
    const samples: number[][] = [];
    const threadIds: number[] = [];
    const n = int(50);
    for (let s = 0; s < n; s++) {
      const stack: number[] = [];
      if (rnd() < 0.25) stack.push(dbg[int(2)]);
      const kind = rnd();
      if (kind < 0.25) {
        stack.push(...coroutine(), ...coroutine());
      } else {
        // A chain of distinct tasks, outermost first.
        const order = [0, 1, 2, 3, 4].sort(() => rnd() - 0.5).slice(0, 1 + int(3));
        const waitingSample = kind >= 0.6;
        stack.push(loop);
        order.forEach((t, i) => {
          const inner = i === order.length - 1;
          const state = !inner ? 'waiting' : waitingSample ? STATES[1 + int(3)] : 'running';
          stack.push(tasks[t][state], ...coroutine());
        });
        if (waitingSample) stack.push(sleep);
        else if (rnd() < 0.2) stack.push(dbg[int(2)], ...(rnd() < 0.5 ? [dbgNative] : coroutine()));
      }
      samples.push(stack);
      threadIds.push(threads[int(threads.length)]);
    }
    const newFrames: Record<string, Frame> = {};
    for (const st of samples)
      for (const id of st)
        if (!announced.has(id)) {
          announced.add(id);
          newFrames[String(id)] = byId.get(id)!;
        }
    const startTime = 1_764_435_600_000 + b * 100;
    bodies.push({ newFrames, samples, sampleCount: n, duration: 100, threadIds, startTime, endTime: startTime + 95, threads: b === 0 ? { '301': { name: 'MainThread', osThreadId: 301 }, '302': { name: 'loop-2', osThreadId: 302 } } : {} });
  }
  return bodies;
}

/** A run with subprocesses: randomStream's threads 101 and 102 in process 100 (the debuggee), 103 in 200, 104 in 300, with the processes announced. */
export const POOL_PID_OF: Record<number, number> = { 101: 100, 102: 100, 103: 200, 104: 300 };
export const POOL_COMMANDS: Record<number, string> = { 100: '/usr/bin/python3 /srv/app/pool.py --workers 2', 200: '/usr/bin/python3 -c from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7) --multiprocessing-fork', 300: '' };

export function pooledStream(seed: number, batches: number): ProfilingDataBody[] {
  return randomStream(seed, batches, { debugger: true }).map((b, i) => ({
    ...b,
    threads: Object.fromEntries(Object.entries(b.threads ?? {}).map(([id, t]) => [id, { ...t, pid: POOL_PID_OF[Number(id)] }])),
    ...(i === 0 ? { processes: Object.fromEntries(Object.entries(POOL_COMMANDS).map(([pid, commandLine]) => [pid, { pid: Number(pid), commandLine }])) } : {}),
  }));
}
