// Writes test/fixtures/synthetic-stream.jsonl: profilingData event bodies (one per line) of a
// made-up but realistic run: a Python program with a main thread that loads, prices and reports
// orders (with a recursive function and a native frame), a worker thread that sleeps in
// time.sleep, and a third thread that appears later. Frames and threads are announced in the
// batch that first uses them, as dapprof does. Deterministic (seeded), so tests can rely on it.
// Usage: node scripts/make-synthetic-stream.mjs [output]
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const out = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'synthetic-stream.jsonl');

function mulberry32(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = mulberry32(20241129);

// Frame IDs: large integers up to 2^53 - 1, as real IDs are.
let nextId = Number.MAX_SAFE_INTEGER;
const frames = new Map(); // name -> [id, frame]
function f(name, file, line, fn, extra = {}) {
  frames.set(name, [nextId, { file, line, function: fn, ...extra }]);
  nextId -= 104729 * (frames.size + 1);
}
f('module', '/app/main.py', 60, '<module>');
f('main', '/app/main.py', 52, 'main');
f('load', '/app/shop/io.py', 14, 'load_orders');
f('read_csv', '/app/shop/io.py', 31, 'read_csv');
f('parse', '/app/shop/io.py', 40, 'parse_line');
f('compute', '/app/shop/pricing.py', 22, 'compute_totals');
f('price36', '/app/shop/pricing.py', 36, 'Order.price');
f('price41', '/app/shop/pricing.py', 41, 'Order.price');
f('discount', '/app/shop/pricing.py', 58, 'apply_discounts');
f('mul', '', 0, 'PyNumber_Multiply', { native: true, module: '/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0' });
f('walk', '/app/shop/tree.py', 9, 'walk_categories');
f('report', '/app/shop/report.py', 10, 'write_report');
f('render', '/app/shop/report.py', 27, 'render_table');
f('format', '/app/shop/report.py', 44, 'format_row');
f('boot', '/usr/lib/python3.12/threading.py', 1030, 'Thread._bootstrap');
f('boot_inner', '/usr/lib/python3.12/threading.py', 1073, 'Thread._bootstrap_inner');
f('run', '/usr/lib/python3.12/threading.py', 1010, 'Thread.run');
f('rates', '/app/shop/rates.py', 12, 'fetch_rates');
f('http', '/app/shop/rates.py', 30, 'http_get');
f('sleep', '', 0, 'time.sleep', { native: true, module: '/usr/lib/python3.12/lib-dynload/time.cpython-312-x86_64-linux-gnu.so' });
f('beat', '/app/shop/health.py', 7, 'heartbeat');
f('log', '/usr/lib/python3.12/logging/__init__.py', 1561, 'Logger.info');

const MAIN = 31337, WORKER = 31340, BEAT = 31352;
const threads = {
  [MAIN]: { name: 'MainThread', osThreadId: MAIN, pid: 31337, pythonThreadId: '140245112850240' },
  [WORKER]: { name: 'Thread-1 (fetch_rates)', osThreadId: WORKER, pid: 31337, pythonThreadId: '140245092931264' },
  [BEAT]: { name: 'Thread-2 (heartbeat)', osThreadId: BEAT, pid: 31337, pythonThreadId: '140245084538560' },
};

// Main thread stacks by phase, with weights.
const phases = [
  [[3, ['module', 'main', 'load', 'read_csv', 'parse']], [1, ['module', 'main', 'load', 'read_csv']], [1, ['module', 'main', 'load']]],
  [
    [4, ['module', 'main', 'compute', 'price36']],
    [3, ['module', 'main', 'compute', 'price41', 'discount']],
    [2, ['module', 'main', 'compute', 'price41', 'discount', 'mul']],
    [1, ['module', 'main', 'compute']],
    [2, 'walk'],
  ],
  [[3, ['module', 'main', 'report', 'render', 'format']], [1, ['module', 'main', 'report', 'render']], [1, ['module', 'main', 'report']]],
];
function pick(choices) {
  const total = choices.reduce((a, [w]) => a + w, 0);
  let r = rnd() * total;
  for (const [w, s] of choices) if ((r -= w) < 0) return s;
  return choices[choices.length - 1][1];
}
function mainStack(batch) {
  const phase = batch < 12 ? 0 : batch < 48 ? 1 : 2;
  const s = pick(phases[phase]);
  if (s === 'walk') return ['module', 'main', 'compute', ...Array(2 + Math.floor(rnd() * 4)).fill('walk')];
  return s;
}

const BATCHES = 60, TICKS = 10; // 100 Hz, 100 ms batches
const announced = new Set(), threadsAnnounced = new Set();
const lines = [];
for (let b = 0; b < BATCHES; b++) {
  const samples = [], threadIds = [], newFrames = {}, newThreads = {};
  const add = (tid, names) => {
    if (!threadsAnnounced.has(tid)) {
      threadsAnnounced.add(tid);
      newThreads[tid] = threads[tid];
    }
    const ids = names.map((n) => {
      const [id, frame] = frames.get(n);
      if (!announced.has(n)) {
        announced.add(n);
        newFrames[id] = frame;
      }
      return id;
    });
    samples.push(ids);
    threadIds.push(tid);
  };
  for (let t = 0; t < TICKS; t++) {
    add(MAIN, mainStack(b));
    if (b >= 2) add(WORKER, rnd() < 0.85 ? ['boot', 'boot_inner', 'run', 'rates', 'http', 'sleep'] : ['boot', 'boot_inner', 'run', 'rates', 'http']);
    if (b >= 30 && t % 2 === 0) add(BEAT, rnd() < 0.5 ? ['boot', 'boot_inner', 'run', 'beat', 'log'] : ['boot', 'boot_inner', 'run', 'beat', 'sleep']);
  }
  const body = { newFrames, samples, sampleCount: samples.length, duration: 100 + Math.round(rnd() * 40) / 100, threadIds, threads: newThreads };
  body.droppedSampleCount = b === 40 ? 3 : 0;
  body.errorCount = b % 17 === 5 ? 1 : 0;
  lines.push(JSON.stringify(body));
}
writeFileSync(out, lines.join('\n') + '\n');
console.log(`wrote ${lines.length} events to ${out}`);
