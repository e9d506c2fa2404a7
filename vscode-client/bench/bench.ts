// Bench of the flame graph page in headless Chromium (figures printed, not asserted):
//  1. aggregation of 1,000,000 samples of depth 30 arriving in batches of 1,000 (profilingData
//     bodies built in the page beforehand; only ProfileModel.addBatch is timed), into the trees
//     as sampled, then also into the trees without the debugger (the panel's default view);
//  2. render time of a 20,000-node call tree (one full canvas draw, as done per animation frame).
// Run: npm run bench (builds first).
import { Harness } from '../test/support/browser';

async function main(): Promise<void> {
  const h = new Harness();
  await h.start();
  try {
    const page = await h.open('light', { width: 1400, height: 900 });
    page.setDefaultTimeout(600_000);
    for (const hide of [false, true]) {
      const agg = await page.evaluate((hide) => {
        const app = (window as any).__dapprof;
        const Model = app.model.constructor;
        // A program of 3,000 distinct frames.
        let seed = 12345;
        const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
        const FRAMES = 3000, DEPTH = 30, BATCH = 1000, BATCHES = 1000;
        const frameDefs: Record<string, unknown> = {};
        for (let i = 0; i < FRAMES; i++) frameDefs[String(1e12 + i)] = { file: `/app/pkg${i % 40}/mod${i % 97}.py`, line: 1 + (i % 500), function: `func_${i}` };
        const model = new Model();
        // No frame here is the debugger's: the view without it holds every stack, its worst case.
        if (hide) model.tree('line', undefined, true);
        let announced = false;
        let addMs = 0, worst = 0;
        const stack = new Array<number>(DEPTH);
        for (let b = 0; b < BATCHES; b++) {
          const samples: number[][] = [];
          const threadIds: number[] = [];
          for (let s = 0; s < BATCH; s++) {
            // The program's call tree branches three ways at 6 of the 30 levels (729 distinct
            // stacks per thread, skewed towards the first branch), as a real program's does.
            let f = 0;
            for (let d = 0; d < DEPTH; d++) {
              stack[d] = 1e12 + f;
              const choice = d % 5 === 2 ? (rnd() < 0.6 ? 0 : rnd() < 0.6 ? 1 : 2) : 0;
              f = (f * 31 + d * 17 + choice * 1009 + 7) % FRAMES;
            }
            samples.push(stack.slice());
            threadIds.push(100 + (s % 4));
          }
          const body = { newFrames: announced ? {} : frameDefs, samples, sampleCount: BATCH, duration: 100, threadIds, threads: announced ? {} : { 100: { name: 'MainThread', osThreadId: 100 }, 101: { name: 't1', osThreadId: 101 }, 102: { name: 't2', osThreadId: 102 }, 103: { name: 't3', osThreadId: 103 } } };
          announced = true;
          const t0 = performance.now();
          model.addBatch(body);
          const dt = performance.now() - t0;
          addMs += dt;
          if (dt > worst) worst = dt;
        }
        return { samples: model.totals.sampleCount, ms: addMs, worst, nodes: model.all.lineTree.nodeCount };
      }, hide);
      const what = hide ? 'as sampled and without the debugger' : 'as sampled';
      console.log(`aggregation (${what}): ${agg.samples.toLocaleString('en-US')} samples of depth 30 in batches of 1,000: ${agg.ms.toFixed(0)} ms in all, ${(agg.ms / 1000).toFixed(2)} ms per batch on average, ${agg.worst.toFixed(1)} ms the slowest batch (${agg.nodes.toLocaleString('en-US')} nodes in the all-threads tree)`);
    }

    const render = await page.evaluate(async () => {
      const app = (window as any).__dapprof;
      // Stacks chosen so that the tree has about 20,000 nodes.
      let seed = 777;
      const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
      const newFrames: Record<string, unknown> = {};
      for (let i = 0; i < 2000; i++) newFrames[String(i + 1)] = { file: `/app/m${i % 50}.py`, line: i + 1, function: `function_${i}` };
      app.handle({ type: 'run', run: { session: 'bench' } });
      const samples: number[][] = [];
      while (app.model.all.lineTree.nodeCount < 20000) {
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
      return { nodes: app.model.all.lineTree.nodeCount, drawn: app.graph.lastStats.drawn, skipped: app.graph.lastStats.skipped, median: times[30], p95: times[57], fullMedian: full[10], width: el.clientWidth };
    });
    console.log(`render: ${render.nodes.toLocaleString('en-US')}-node tree, ${render.width} px wide (${render.drawn.toLocaleString('en-US')} nodes wide enough to draw, ${render.skipped.toLocaleString('en-US')} skipped): canvas draw ${render.median.toFixed(2)} ms median, ${render.p95.toFixed(2)} ms p95 (target < 16 ms); whole page update with the table ${render.fullMedian.toFixed(2)} ms median`);
  } finally {
    await h.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
