// Profiling streams made up for the tests: random, repetitive, of asyncio tasks, of a process
// pool, each obeying docs/PROFILING.md, for the model to be compared with the reference
// (reference.ts) and for the views to be driven with.

import type { Frame, ProfilingDataBody } from '../../src/model/protocol';

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
