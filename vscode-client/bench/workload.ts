// The bench's synthetic program, installed in the page as window.__bench: profilingData bodies of
// samples of depth 30 from 4 threads, built the way a real stream looks (frame IDs as dapprof
// sends them, large numbers; new arrays per sample, as a message's JSON gives them).
//
// The program's call tree branches three ways at 6 of the 30 levels (729 distinct stacks per
// thread, skewed towards the first branch), as a real program's does. It runs in the page: this
// function is serialized by playwright, so it must not use anything from outside itself.

export interface BenchBody {
  newFrames: Record<string, unknown>;
  samples: number[][];
  sampleCount: number;
  duration: number;
  startTime: number;
  endTime: number;
  threadIds: number[];
  threads: Record<string, unknown>;
}

export interface BenchGenerator {
  /** The next body: `samples` samples over `duration` ms; frames and threads in the first one. */
  next(samples: number, duration: number): BenchBody;
}

export function installGenerator(): void {
  let seed = 12345;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  const FRAMES = 3000, DEPTH = 30;
  const frameDefs: Record<string, unknown> = {};
  for (let i = 0; i < FRAMES; i++) frameDefs[String(1e12 + i)] = { file: `/app/pkg${i % 40}/mod${i % 97}.py`, line: 1 + (i % 500), function: `func_${i}` };
  const threads = { 100: { name: 'MainThread', osThreadId: 100 }, 101: { name: 't1', osThreadId: 101 }, 102: { name: 't2', osThreadId: 102 }, 103: { name: 't3', osThreadId: 103 } };
  let announced = false;
  let n = 0;
  // Wall-clock times of the samples, as the daemon stamps an event: back to back, from a fixed start.
  let time = 1_764_435_600_000;
  const gen = {
    next(count: number, duration: number) {
      const samples: number[][] = [];
      const threadIds: number[] = [];
      for (let s = 0; s < count; s++) {
        const stack = new Array<number>(DEPTH);
        let f = 0;
        for (let d = 0; d < DEPTH; d++) {
          stack[d] = 1e12 + f;
          const choice = d % 5 === 2 ? (rnd() < 0.6 ? 0 : rnd() < 0.6 ? 1 : 2) : 0;
          f = (f * 31 + d * 17 + choice * 1009 + 7) % FRAMES;
        }
        samples.push(stack);
        threadIds.push(100 + (n++ % 4));
      }
      const startTime = time + duration / count;
      time += duration;
      const body = { newFrames: announced ? {} : frameDefs, samples, sampleCount: count, duration, startTime, endTime: time, threadIds, threads: announced ? {} : threads };
      announced = true;
      return body;
    },
  };
  (window as unknown as { __bench: unknown }).__bench = gen;
}
