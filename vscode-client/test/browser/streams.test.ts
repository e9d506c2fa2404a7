// The flame graph page in real headless Chromium, fed the streams dapprof writes: the stream of
// its protocol encoder (deep stacks, native frames, non-ASCII names) and a stream recorded from
// live profiling under debugpy (with the debugger's frames hidden and shown). Checked on the tree
// model against the naive aggregation, on pixels, and with real mouse events. Screenshots go to
// build/screenshots/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { nodeRgb } from '../../src/webview/theme';
import { harnessForFile, screenshotDir } from '../support/browser';
import { byNames, feed, frames, modelByNames, pixel, post, tableCurrent, text } from '../support/page';
import { clientRoot, readStream } from '../support/reference';
import { pooledStream } from '../support/streams';

/* eslint-disable @typescript-eslint/no-explicit-any */
const h = harnessForFile();

const ENCODER = readStream('encoder-stream.jsonl');
const LIVE = readStream('live-stream.jsonl');

test("the stream of dapprof's protocol encoder: deep stacks, native frames, non-ASCII names", async () => {
  const page = await h.open();
  await post(page, [{ type: 'run', run: { session: 'encoder stream' } }]);
  await feed(page, ENCODER);
  const total = ENCODER.reduce((a, b) => a + b.sampleCount, 0);
  const ref = byNames(ENCODER, 'line');
  await page.selectOption('#group', 'line');
  await page.waitForFunction(() => (window as any).__dapprof.groupBy === 'line');
  await frames(page);
  // Names repeat on several lines here, so compare summed per name path.
  const got = await modelByNames(page);
  assert.equal(got.get('')![0], total);
  assert.equal(got.size, ref.size);
  for (const [p, v] of ref) assert.deepEqual(got.get(p), [v.total, v.self], p);
  // The widest depth-1 node is drawn in its colour.
  const top = await page.evaluate(() => {
    const app = (window as any).__dapprof;
    const kids = [...app.graph.tree.root.children.values()].sort((a: any, b: any) => b.total - a.total);
    const info = app.model.keyInfo('line', kids[0].key);
    const r = app.graph.rectOf(kids[0]);
    return { name: info.function, native: info.native, x: r.x, w: r.w };
  });
  assert.deepEqual(await pixel(page, top.x + top.w - 2, 19), nodeRgb(top.name, top.native, 'light'));
  await tableCurrent(page);
  const names = await page.$$eval('#table tbody .name', (n) => n.map((x) => x.textContent ?? ''));
  assert.ok(names.some((n) => /[^\x00-\x7f]/.test(n)), 'non-ASCII names shown');
  assert.match(await text(page, '#stats'), /dropped/);
  await page.screenshot({ path: join(screenshotDir, 'flamegraph-encoder-stream.png') });
  assert.deepEqual(h.pageErrors, []);
  await page.close();
});

/** 1-based first and last line of a top-level function of test/fixtures/live-app.py. */
function liveAppLines(name: string): [number, number] {
  const src = readFileSync(join(clientRoot, 'test', 'fixtures', 'live-app.py'), 'utf8').split('\n');
  const start = src.findIndex((l) => l.startsWith(`def ${name}(`));
  assert.ok(start >= 0, `live-app.py defines ${name}`);
  let end = start + 1;
  while (end < src.length && (src[end] === '' || src[end].startsWith(' '))) end++;
  while (src[end - 1] === '') end--;
  return [start + 1, end];
}

test('a stream recorded from live profiling under debugpy: model, pixels, hover, thread filter', async () => {
  const page = await h.open();
  await post(page, [{ type: 'run', run: { session: 'live-app.py', rate: 100 } }]);
  await feed(page, LIVE);
  const total = LIVE.reduce((a, b) => a + b.sampleCount, 0);
  assert.ok(total >= 100, `the recording holds ${total} samples`);
  // The tree equals the naive aggregation, per name path, in both groupings: first without the
  // debugger's frames (the default), then with them after a click on "Hide debugger", then
  // without them again.
  assert.equal(await page.isChecked('#hide-debugger'), true, 'the debugger is hidden by default');
  for (const hide of [true, false, true]) {
    if ((await page.isChecked('#hide-debugger')) !== hide) await page.click('#hide-debugger');
    await page.waitForFunction((v) => (window as any).__dapprof.hideDebugger === v, hide);
    for (const groupBy of ['line', 'function'] as const) {
      await page.selectOption('#group', groupBy);
      await page.waitForFunction((g) => (window as any).__dapprof.groupBy === g, groupBy);
      await frames(page);
      const got = await modelByNames(page);
      const ref = byNames(LIVE, groupBy, 'all', hide);
      assert.equal(got.size, ref.size, `${groupBy}, debugger ${hide ? 'hidden' : 'shown'}`);
      for (const [p, v] of ref) assert.deepEqual(got.get(p), [v.total, v.self], `${groupBy}, debugger ${hide ? 'hidden' : 'shown'}: ${p}`);
      // Shown, the stacks start in runpy and pydevd's thread wrapper; hidden, in the program's
      // module, threading's bootstrap, or the one node of the debugger's own samples.
      const roots = [...got.keys()].filter((k) => k !== '' && !k.includes(' > ')).sort();
      assert.deepEqual(roots, hide ? ['(debugger)', '<module>', 'Thread._bootstrap'] : ['_NewThreadStartupWithTrace.__call__', '_run_module_as_main'], `roots: ${roots}`);
    }
    assert.equal(await page.evaluate(() => (window as any).__state?.hideDebugger), hide, 'the choice is kept in the webview state');
  }
  // Each change is told to the extension, which exports what the panel shows.
  const told = await page.evaluate(() => (window as any).__posted.filter((m: any) => m.type === 'hideDebugger').map((m: any) => m.hideDebugger));
  assert.deepEqual(told, [false, true]);
  await frames(page);

  // The program's own functions, in the recorded file at lines inside their definitions; the
  // main thread's and the hasher's.
  const found: Record<string, { file: string; line: number; total: number; x: number; y: number; w: number; h: number; cx: number; cy: number }> = await page.evaluate(() => {
    const app = (window as any).__dapprof;
    const out: Record<string, any> = {};
    const c = app.graph.canvas.getBoundingClientRect();
    const walk = (n: any) => {
      for (const k of n.children?.values() ?? []) {
        const info = app.model.keyInfo('function', k.key);
        if (info.file.endsWith('/live-app.py') && (!out[info.function] || out[info.function].total < k.total)) {
          const r = app.graph.rectOf(k);
          out[info.function] = { file: info.file, line: info.line, total: k.total, ...r, cx: c.left, cy: c.top };
        }
        walk(k);
      }
    };
    walk(app.graph.tree.root);
    return out;
  });
  for (const fn of ['main', 'run_batches', 'checksum', 'hash_blocks', 'digest']) {
    assert.ok(found[fn], `${fn} is in the recorded profile`);
    const [first, last] = liveAppLines(fn);
    assert.ok(found[fn].line >= first && found[fn].line <= last, `${fn}: line ${found[fn].line} in ${first}-${last}`);
    assert.equal(basename(found[fn].file), 'live-app.py');
  }
  assert.ok(found.run_batches.total <= found.main.total);
  // The widest node of run_batches is drawn in its colour, away from its label.
  const rb = found.run_batches;
  assert.ok(rb.w > 6, 'run_batches is wide enough to read a pixel from');
  assert.deepEqual(await pixel(page, rb.x + rb.w - 3, rb.y + 1), nodeRgb('run_batches', false, 'light'));
  // Hover: its function and file:line.
  await page.mouse.move(rb.cx + rb.x + rb.w / 2, rb.cy + rb.y + rb.h / 2);
  await page.waitForSelector('#tooltip:not([hidden])');
  assert.equal(await text(page, '#tooltip .fn'), 'run_batches');
  assert.equal(await text(page, '#tooltip .loc'), `${rb.file}:${rb.line}`);
  await page.screenshot({ path: join(screenshotDir, 'flamegraph-live-stream.png') });

  // The thread selector names the recorded threads; the hasher alone has no main().
  const options = await page.$$eval('#thread option', (o) => o.map((x) => x.textContent ?? ''));
  assert.ok(options.some((o) => o.startsWith('MainThread (')), options.join(' | '));
  const hasher = options.findIndex((o) => o.startsWith('hasher ('));
  assert.ok(hasher > 0, options.join(' | '));
  await page.selectOption('#thread', { index: hasher });
  await page.waitForFunction(() => (window as any).__dapprof.thread !== undefined);
  await frames(page);
  const names: string[] = await page.evaluate(() => {
    const app = (window as any).__dapprof;
    const out: string[] = [];
    const walk = (n: any) => {
      for (const k of n.children?.values() ?? []) {
        out.push(app.model.keyInfo('function', k.key).function);
        walk(k);
      }
    };
    walk(app.graph.tree.root);
    return out;
  });
  assert.ok(names.includes('hash_blocks') && names.includes('digest'));
  assert.ok(!names.includes('run_batches') && !names.includes('checksum'));
  assert.deepEqual(h.pageErrors, []);
  await page.close();
});

test('a run over several processes: the thread selector offers each process (all its threads) above its threads', async () => {
  const page = await h.open();
  const bodies = pooledStream(3, 20);
  await post(page, [{ type: 'run', run: { session: 'pool' } }]);
  await feed(page, bodies);
  await frames(page);
  const options = await page.$$eval('#thread option', (o) => o.map((x) => ({ value: (x as HTMLOptionElement).value, text: x.textContent ?? '' })));
  const at = options.findIndex((o) => o.text.startsWith('process 100 (python3 pool.py --workers 2): its 2 threads'));
  assert.ok(at > 0, options.map((o) => o.text).join(' | '));
  // Its threads follow it, indented.
  assert.deepEqual(options.slice(at + 1, at + 3).map((o) => o.text.replace(/^\u2003/, '')).sort(), ['T101 (101)', 'T102 (102)']);
  assert.ok(options.slice(at + 1, at + 3).every((o) => o.text.startsWith('\u2003')));
  assert.ok(options.some((o) => o.text === 'process 300: its thread'));
  await page.selectOption('#thread', options[at].value);
  await page.waitForFunction((v) => (window as any).__dapprof.thread === Number(v), options[at].value);
  await frames(page);
  const shown = await page.evaluate(() => {
    const app = (window as any).__dapprof;
    return { root: app.graph.tree.root.total, want: app.model.sampleCount(app.thread), label: app.graph.rootLabel, t101: app.model.sampleCount(101), t102: app.model.sampleCount(102) };
  });
  assert.equal(shown.root, shown.want);
  assert.equal(shown.root, shown.t101 + shown.t102, 'the process is its two threads');
  assert.equal(shown.label, 'process 100 (python3 pool.py --workers 2)');
  await page.screenshot({ path: join(screenshotDir, 'flamegraph-process-pool.png') });
  assert.deepEqual(h.pageErrors, []);
  await page.close();
});
