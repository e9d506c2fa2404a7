// Bench of the flame graph page in headless Chromium (figures printed, not asserted):
//  1. aggregation of 1,000,000 samples of depth 30 arriving in batches of 1,000 (bodies built in
//     the page, untimed): ProfileModel.addBatch and the tree read the next frame makes (the
//     panel draws after every batch), into the trees as sampled, then also into the trees
//     without the debugger (the panel's default view);
//  2. render time of a 20,000-node call tree (one full canvas draw, as done per animation frame);
//  3. the page's JavaScript heap while it is fed one hour of samples at 1 kHz (3.6 M samples in
//     batches of 100, drawn as they come): it must stay bounded, since samples are not kept;
//     Then the timeline strip of that hour: its buckets and (bucket, stack) pairs, one draw of
//     it, and the graph and table limited to a range of half the run (built from the buckets);
//  4. input latency while 10 kHz of samples arrive as messages (batches of 1,000 every 100 ms):
//     from a real mouse move or key press (CDP input) to its handler, and to the next frame.
// Run: npm run bench (builds first). `-- --profile DIR` also writes a CPU profile of each step
// to DIR and prints its top functions (build without --production for readable names);
// `-- --only aggregation,render` runs only those steps (of aggregation, render, memory, latency).
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { Harness } from '../test/support/browser';
import { Cdp } from './cdp';
import { BenchGenerator, installGenerator } from './workload';

/* eslint-disable @typescript-eslint/no-explicit-any */
const profileArg = process.argv.indexOf('--profile');
const profileDir = profileArg > 0 ? process.argv[profileArg + 1] : undefined;
if (profileDir) mkdirSync(profileDir, { recursive: true });
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg > 0 ? process.argv[onlyArg + 1].split(',') : ['aggregation', 'render', 'memory', 'latency'];
const mb = (b: number) => `${(b / 1048576).toFixed(1)} MB`;
const nf = (n: number) => n.toLocaleString('en-US');

async function aggregation(page: Page, cdp: Cdp): Promise<void> {
  for (const hide of [false, true]) {
    await page.evaluate(installGenerator);
    const agg = await cdp.profiled(profileDir, `aggregation-${hide ? 'hidden' : 'shown'}`, () =>
      page.evaluate((hide) => {
        const app = (window as any).__dapprof;
        const gen = (window as any).__bench as BenchGenerator;
        const Model = app.model.constructor;
        const model = new Model();
        // No frame here is the debugger's: the view without it holds every stack, its worst case.
        if (hide) model.tree('line', undefined, true);
        let ms = 0, worst = 0;
        // Bodies are built ten at a time, untimed: the page holds one message at a time, not
        // the 250 MB of a million samples' arrays (whose garbage collection would be timed).
        for (let chunk = 0; chunk < 100; chunk++) {
          const bodies = Array.from({ length: 10 }, () => gen.next(1000, 100));
          for (const body of bodies) {
            const t0 = performance.now();
            model.addBatch(body);
            model.tree('line', undefined, hide);
            const dt = performance.now() - t0;
            ms += dt;
            if (dt > worst) worst = dt;
          }
        }
        return { samples: model.totals.sampleCount, ms, worst, nodes: model.tree("line").nodeCount };
      }, hide),
    );
    const what = hide ? 'as sampled and without the debugger' : 'as sampled';
    console.log(`aggregation (${what}): ${nf(agg.samples)} samples of depth 30 in batches of 1,000: ${agg.ms.toFixed(0)} ms in all, ${(agg.ms / 1000).toFixed(2)} ms per batch on average, ${agg.worst.toFixed(1)} ms the slowest batch (${nf(agg.nodes)} nodes in the all-threads tree)`);
  }
}

async function render(page: Page, cdp: Cdp): Promise<void> {
  const r = await cdp.profiled(profileDir, 'render', () =>
    page.evaluate(async () => {
      const app = (window as any).__dapprof;
      // Stacks chosen so that the tree has about 20,000 nodes.
      let seed = 777;
      const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
      const newFrames: Record<string, unknown> = {};
      for (let i = 0; i < 2000; i++) newFrames[String(i + 1)] = { file: `/app/m${i % 50}.py`, line: i + 1, function: `function_${i}` };
      app.handle({ type: 'run', run: { session: 'bench' } });
      const samples: number[][] = [];
      while (app.model.tree("line").nodeCount < 20000) {
        samples.length = 0;
        for (let s = 0; s < 200; s++) {
          const depth = 5 + Math.floor(rnd() * 25);
          const st: number[] = [];
          let f = 1 + Math.floor(rnd() * 3);
          for (let d = 0; d < depth; d++) {
            st.push(f);
            f = 1 + ((f * 31 + Math.floor(rnd() * 4) * 97 + d) % 2000);
          }
          samples.push(st);
        }
        app.model.addBatch({ newFrames, samples, sampleCount: samples.length, duration: 10 });
      }
      app.groupBy = 'line';
      app.render();
      await new Promise((r) => requestAnimationFrame(r));
      const el = document.getElementById('graph')!;
      const times: number[] = [];
      const full: number[] = [];
      for (let i = 0; i < 60; i++) {
        const t0 = performance.now();
        app.graph.draw(el.clientWidth, Math.max(el.clientHeight, app.graph.contentHeight()));
        times.push(performance.now() - t0);
      }
      // Whole page update (graph, header, breadcrumb, table) as after a batch.
      for (let i = 0; i < 20; i++) {
        app.model.version++;
        const t0 = performance.now();
        app.render();
        full.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      full.sort((a, b) => a - b);
      return { nodes: app.model.tree("line").nodeCount, drawn: app.graph.lastStats.drawn, skipped: app.graph.lastStats.skipped, median: times[30], p95: times[57], fullMedian: full[10], width: el.clientWidth };
    }),
  );
  console.log(`render: ${nf(r.nodes)}-node tree, ${r.width} px wide (${nf(r.drawn)} nodes wide enough to draw, ${nf(r.skipped)} skipped): canvas draw ${r.median.toFixed(2)} ms median, ${r.p95.toFixed(2)} ms p95 (target < 16 ms); whole page update with the table ${r.fullMedian.toFixed(2)} ms median`);
}

async function memory(h: Harness): Promise<void> {
  const page = await h.open('light', { width: 1400, height: 900 });
  page.setDefaultTimeout(600_000);
  const cdp = await Cdp.attach(page);
  await page.evaluate(installGenerator);
  await page.evaluate(() => (window as any).__dapprof.handle({ type: 'run', run: { session: 'bench' } }));
  const start = await cdp.heapUsed();
  const marks: string[] = [];
  let fedMs = 0;
  // Ten steps of 6 minutes: 3,600 batches of 100 samples (100 ms each), a frame drawn every 10 s.
  for (let step = 1; step <= 10; step++) {
    fedMs += await page.evaluate(async () => {
      const app = (window as any).__dapprof;
      const gen = (window as any).__bench as BenchGenerator;
      let ms = 0;
      for (let b = 0; b < 3600; b++) {
        const body = gen.next(100, 100);
        const t0 = performance.now();
        app.handle({ type: 'data', body });
        ms += performance.now() - t0;
        if (b % 100 === 99) await new Promise((r) => requestAnimationFrame(r));
      }
      return ms;
    });
    if (step === 1 || step === 5 || step === 10) marks.push(`${step * 6} min ${mb(await cdp.heapUsed())}`);
  }
  const samples = await page.evaluate(() => (window as any).__dapprof.model.totals.sampleCount as number);
  console.log(`memory: JS heap of the page after a garbage collection, fed one hour at 1 kHz (${nf(samples)} samples in batches of 100, a frame every 10 s): ${mb(start)} at the start, ${marks.join(', ')} (feeding took ${(fedMs / 1000).toFixed(1)} s of the page's time)`);
  const t = await page.evaluate(() => {
    const app = (window as any).__dapprof;
    const tl = app.model.timeline;
    const draws: number[] = [];
    for (let i = 0; i < 31; i++) {
      const t0 = performance.now();
      app.timeline.draw({ timeline: tl, thread: undefined, live: false, range: null, palette: app.graph.palette });
      draws.push(performance.now() - t0);
    }
    draws.sort((a, b) => a - b);
    const ranges: number[] = [];
    const span = tl.bucketCount * tl.width;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      app.setRange({ start: tl.origin + (i * span) / 10, end: tl.origin + (i * span) / 10 + span / 2 });
      app.render();
      ranges.push(performance.now() - t0);
    }
    ranges.sort((a, b) => a - b);
    app.setRange(null);
    return { buckets: tl.bucketCount, width: tl.width, entries: tl.entries, draw: draws[15], range: ranges[2] };
  });
  console.log(`timeline: the hour in ${nf(t.buckets)} buckets of ${(t.width / 1000).toFixed(1)} s, ${nf(t.entries)} (bucket, stack) pairs (${mb(t.entries * 8)} of typed arrays, outside the JS heap's figure); strip draw ${t.draw.toFixed(2)} ms median; a range of half the run, graph and table rebuilt and drawn, ${t.range.toFixed(0)} ms median`);
  await page.close();
}

async function latency(h: Harness): Promise<void> {
  const page = await h.open('light', { width: 1400, height: 900 });
  const cdp = await Cdp.attach(page);
  await page.evaluate(installGenerator);
  // In the page: record each input event's delay to its handler and to the next frame, and feed
  // 10 kHz as the extension does, by messages (structured clone, as a webview receives them).
  await page.evaluate(() => {
    const w = window as any;
    w.__lat = { handler: [] as number[], frame: [] as number[] };
    const record = (e: Event) => {
      const t = e.timeStamp;
      w.__lat.handler.push(performance.now() - t);
      requestAnimationFrame(() => w.__lat.frame.push(performance.now() - t));
    };
    for (const type of ['mousemove', 'keydown']) window.addEventListener(type, record, true);
    w.__dapprof.handle({ type: 'run', run: { session: 'bench' } });
    const bodies = Array.from({ length: 50 }, () => w.__bench.next(1000, 100));
    let i = 0;
    w.__feeder = setInterval(() => window.postMessage({ type: 'data', body: bodies[i++ % bodies.length] }, '*'), 100);
  });
  await page.waitForTimeout(2000);
  const box = (await page.locator('#graph').boundingBox())!;
  await cdp.profiled(profileDir, 'latency', async () => {
    for (let i = 0; i < 60; i++) {
      await page.mouse.move(box.x + 20 + ((i * 97) % (box.width - 40)), box.y + 10 + ((i * 37) % 200));
      await page.waitForTimeout(25);
    }
    await page.click('#search');
    for (let i = 0; i < 4; i++) {
      await page.keyboard.type('func_12', { delay: 25 });
      for (let k = 0; k < 7; k++) await page.keyboard.press('Backspace', { delay: 25 });
    }
    await page.waitForTimeout(100);
  });
  const r = await page.evaluate(() => {
    const w = window as any;
    clearInterval(w.__feeder);
    const stat = (a: number[]) => {
      const s = [...a].sort((x, y) => x - y);
      return { median: s[Math.floor(s.length / 2)], p95: s[Math.floor(s.length * 0.95)], max: s[s.length - 1], n: s.length };
    };
    return { handler: stat(w.__lat.handler), frame: stat(w.__lat.frame), samples: w.__dapprof.model.totals.sampleCount as number };
  });
  const f = (s: { median: number; p95: number; max: number }) => `${s.median.toFixed(1)} ms median, ${s.p95.toFixed(1)} ms p95, ${s.max.toFixed(1)} ms max`;
  console.log(`input latency while 10 kHz arrives (${r.handler.n} mouse moves and key presses, ${nf(r.samples)} samples received): to the handler ${f(r.handler)}; to the next frame ${f(r.frame)}`);
  await page.close();
}

async function main(): Promise<void> {
  const h = new Harness();
  await h.start();
  try {
    const page = await h.open('light', { width: 1400, height: 900 });
    page.setDefaultTimeout(600_000);
    const cdp = await Cdp.attach(page);
    if (only.includes('aggregation')) await aggregation(page, cdp);
    if (only.includes('render')) await render(page, cdp);
    await page.close();
    if (only.includes('memory')) await memory(h);
    if (only.includes('latency')) await latency(h);
  } finally {
    await h.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
