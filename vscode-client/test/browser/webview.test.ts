// The flame graph page in real headless Chromium, fed the synthetic stream: checked on its tree
// model (against a naive aggregation), on the pixels drawn at known nodes, and driven with real
// mouse and keyboard events; its states, themes, a narrow panel and the webview's CSP.
// (streams.test.ts feeds it the streams written by dapprof.) Screenshots are written to
// build/screenshots/ for people to look at.
import { Uri } from '../support/fake-vscode'; // first: panel.ts requires 'vscode'
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { webviewHtml } from '../../src/extension/panel';
import { nodeRgb, parseColor } from '../../src/webview/theme';
import { harnessForFile, screenshotDir } from '../support/browser';
import { byNames, canvasWidth, feed, frames, modelByNames, near, nodeBox, pixel, post, tableCurrent, text } from '../support/page';
import { readStream, referenceAggregate } from '../support/reference';

/* eslint-disable @typescript-eslint/no-explicit-any */
const h = harnessForFile();

const SYNTH = readStream('synthetic-stream.jsonl');
const TOTAL = SYNTH.reduce((a, b) => a + b.sampleCount, 0);
const REF = byNames(SYNTH, 'function');

test('starts idle, announces itself ready, and waits for data when a run starts', async () => {
  const page = await h.open();
  assert.deepEqual(await page.evaluate(() => (window as any).__posted), [{ type: 'ready', hideDebugger: true }]);
  assert.equal(await text(page, '#state'), 'Not profiling');
  assert.match(await text(page, '#overlay'), /Start profiling from the debug toolbar/);
  await post(page, [{ type: 'run', run: { session: 'app.py', pid: 31337, pythonVersion: '3.12.1', rate: 100 } }]);
  await page.waitForFunction(() => document.getElementById('state')!.textContent === 'Waiting for data');
  assert.equal(await text(page, '#overlay'), 'Waiting for profiling data…');
  await page.close();
});

test('synthetic stream: the tree model, the pixels at known nodes, the table and a screenshot', async () => {
  const page = await h.open();
  await post(page, [{ type: 'run', run: { session: 'app.py', pid: 31337, rate: 100 } }]);
  await feed(page, SYNTH);
  assert.equal(await text(page, '#state'), 'Live');
  assert.match(await text(page, '#stats'), new RegExp(`^${TOTAL.toLocaleString('en-US')} samples · `));
  assert.equal(await page.isHidden('#overlay'), true);

  // Tree model: every node of every path equals the naive aggregation (names are unique here).
  const model = [...(await modelByNames(page))].map(([k, [total, self]]) => [k, total, self]);
  assert.deepEqual(
    model.sort((a, b) => (a[0] < b[0] ? -1 : 1)),
    [...REF].map(([k, v]) => [k, v.total, v.self]).sort((a, b) => (a[0] < b[0] ? -1 : 1)),
  );

  // Layout: depth 1 holds <module> (main thread) then Thread._bootstrap (the two other threads),
  // in name order, with widths proportional to their samples.
  const width = await canvasWidth(page);
  const mod = (await nodeBox(page, ['<module>']))!;
  const boot = (await nodeBox(page, ['Thread._bootstrap']))!;
  const modTotal = REF.get('<module>')!.total;
  assert.equal(mod.total, modTotal);
  assert.ok(Math.abs(mod.w - (width * modTotal) / TOTAL) < 0.01);
  assert.ok(Math.abs(boot.x - (width * modTotal) / TOTAL) < 0.01);
  // Pixels, read back from the canvas, away from the labels: each node has its function's colour.
  const py = 18 + 1; // row 1, first pixel line below its top
  assert.deepEqual(await pixel(page, 2, py), nodeRgb('<module>', false, 'light'));
  assert.deepEqual(await pixel(page, mod.w - 3, py), nodeRgb('<module>', false, 'light'));
  assert.deepEqual(await pixel(page, boot.x + boot.w - 3, py), nodeRgb('Thread._bootstrap', false, 'light'));
  const sleep = (await nodeBox(page, ['Thread._bootstrap', 'Thread._bootstrap_inner', 'Thread.run', 'fetch_rates', 'http_get', 'time.sleep']))!;
  assert.equal(sleep.y, 6 * 18);
  assert.deepEqual(await pixel(page, sleep.x + sleep.w - 3, sleep.y + 1), nodeRgb('time.sleep', true, 'light'));
  // Below the deepest frame of a leaf-only column there is background.
  assert.deepEqual(await pixel(page, sleep.x + sleep.w - 3, sleep.y + 18 + 2), [255, 255, 255]);

  // The table: functions by own samples, like `py-spy top`.
  await tableCurrent(page);
  const rows = await page.$$eval('#table tbody tr', (trs) => trs.map((tr) => [tr.querySelector('.name')!.textContent, Number((tr as HTMLElement).dataset.self), Number((tr as HTMLElement).dataset.total)]));
  const selfByFn = new Map<string, number>();
  for (const [path, v] of REF) if (v.self) selfByFn.set(path.split(' > ').at(-1)!, (selfByFn.get(path.split(' > ').at(-1)!) ?? 0) + v.self);
  const best = [...selfByFn].sort((a, b) => b[1] - a[1])[0];
  assert.deepEqual(rows[0].slice(0, 2), best);
  assert.equal(rows.find((r) => r[0] === '<module>')![2], modTotal);

  await page.screenshot({ path: join(screenshotDir, 'flamegraph-light.png') });
  assert.deepEqual(h.pageErrors, []);
  await page.close();
});

test('hover shows function, file:line, samples, % of total and of parent (real mouse)', async () => {
  const page = await h.open();
  await feed(page, SYNTH);
  const path = ['<module>', 'main', 'compute_totals', 'Order.price'];
  const b = (await nodeBox(page, path))!;
  await page.mouse.move(b.cx + b.x + b.w / 2, b.cy + b.y + b.h / 2);
  await page.waitForSelector('#tooltip:not([hidden])');
  const tip = await text(page, '#tooltip');
  const n = REF.get(path.join(' > '))!;
  const parent = REF.get(path.slice(0, -1).join(' > '))!;
  const pct = (x: number) => (x >= 10 ? `${x.toFixed(1)}%` : `${x.toFixed(2)}%`);
  assert.match(tip, /^Order\.price/);
  assert.ok(tip.includes('/app/shop/pricing.py:36'), tip);
  assert.ok(tip.includes(`${n.total} samples · ${pct((100 * n.total) / TOTAL)} of total · ${pct((100 * n.total) / parent.total)} of parent`), tip);
  assert.ok(tip.includes(`own: ${n.self} samples`), tip);
  // The hovered node is outlined in the foreground colour.
  await frames(page);
  const fg = parseColor('#3b3b3b')!;
  const edge = await pixel(page, b.x + b.w / 2, b.y + 1);
  assert.ok(near(edge, fg, 40), `outline drawn: ${edge}`);
  await page.screenshot({ path: join(screenshotDir, 'flamegraph-hover.png') });
  await page.mouse.move(b.cx + 5, b.cy + 600);
  await page.waitForSelector('#tooltip', { state: 'hidden' });
  await page.close();
});

test('click zooms into a node, the breadcrumb and Escape zoom out; Ctrl+click opens the source', async () => {
  const page = await h.open();
  await feed(page, SYNTH);
  const width = await canvasWidth(page);
  const path = ['<module>', 'main', 'compute_totals'];
  const b = (await nodeBox(page, path))!;
  assert.ok(b.w < width - 1);
  await page.mouse.click(b.cx + b.x + b.w / 2, b.cy + b.y + b.h / 2);
  await page.waitForFunction(() => document.querySelectorAll('#breadcrumb .crumb').length === 4);
  await page.mouse.move(b.cx + 5, b.cy + 650); // off the nodes: no hover outline on the pixels read
  await page.waitForSelector('#tooltip', { state: 'hidden' });
  assert.deepEqual(await page.$$eval('#breadcrumb .crumb', (c) => c.map((x) => x.textContent)), ['all threads', '<module>', 'main', 'compute_totals']);
  await frames(page);
  // The zoomed node now spans the whole width; its children share it by their samples.
  const z = (await nodeBox(page, path))!;
  assert.deepEqual([z.x, z.w], [0, width]);
  assert.deepEqual(await pixel(page, width - 3, z.y + 1), nodeRgb('compute_totals', false, 'light'));
  const kid = (await nodeBox(page, [...path, 'Order.price']))!;
  const ref = REF.get([...path, 'Order.price'].join(' > '))!;
  assert.ok(Math.abs(kid.w - (width * ref.total) / REF.get(path.join(' > '))!.total) < 0.01);
  assert.match(await text(page, '#details'), /compute_totals/);
  await page.screenshot({ path: join(screenshotDir, 'flamegraph-zoom.png') });

  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.querySelectorAll('#breadcrumb .crumb').length === 3);
  await page.click('#breadcrumb .crumb >> nth=0');
  await page.waitForFunction(() => document.querySelectorAll('#breadcrumb .crumb').length === 1);
  assert.equal(await page.isDisabled('#reset'), true);

  // Ctrl+click asks the extension to open the file at the line.
  await frames(page);
  const p = (await nodeBox(page, ['<module>', 'main', 'load_orders']))!;
  await page.keyboard.down('Control');
  await page.mouse.click(p.cx + p.x + p.w / 2, p.cy + p.y + p.h / 2);
  await page.keyboard.up('Control');
  await page.waitForFunction(() => (window as any).__posted.length === 2);
  assert.deepEqual(await page.evaluate(() => (window as any).__posted[1]), { type: 'openSource', file: '/app/shop/io.py', line: 14 });
  assert.equal(await page.$$eval('#breadcrumb .crumb', (c) => c.length), 1, 'Ctrl+click does not zoom');
  await page.close();
});

test('the open-source link of a zoomed node keeps working while data streams in', async () => {
  const page = await h.open();
  await feed(page, SYNTH.slice(0, 30));
  const path = ['<module>', 'main', 'load_orders'];
  const b = (await nodeBox(page, path))!;
  await page.mouse.click(b.cx + b.x + b.w / 2, b.cy + b.y + b.h / 2);
  const link = page.locator('#details a.open-source');
  await link.waitFor();
  const r = (await link.boundingBox())!;
  // A person's click: the button goes down, batches arrive and are drawn, the button comes up.
  await page.mouse.move(r.x + r.width / 2, r.y + r.height / 2);
  await page.mouse.down();
  await feed(page, SYNTH.slice(30));
  await page.mouse.up();
  await page.waitForFunction(() => (window as any).__posted.length === 2);
  assert.deepEqual(await page.evaluate(() => (window as any).__posted[1]), { type: 'openSource', file: '/app/shop/io.py', line: 14 });
  // The share shown is that of all the data.
  const share = (100 * REF.get(path.join(' > '))!.total) / TOTAL;
  assert.ok((await text(page, '#details')).includes(` ${share >= 10 ? share.toFixed(1) : share.toFixed(2)}% of samples · `));
  await page.close();
});

test('search by keyboard highlights matches and gives their total %', async () => {
  const page = await h.open();
  await feed(page, SYNTH);
  await page.mouse.click(600, 400); // focus the page
  await page.keyboard.press('Control+f');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'search');
  await page.keyboard.type('price');
  await page.waitForFunction(() => /of samples/.test(document.getElementById('match')!.textContent ?? ''));
  await frames(page);
  // Samples with Order.price on the stack:
  let matched = 0;
  for (const [k, v] of REF) if (k.endsWith('> Order.price')) matched += v.total;
  assert.equal(await text(page, '#match'), `${((100 * matched) / TOTAL).toFixed(1)}% of samples`);
  const price = (await nodeBox(page, ['<module>', 'main', 'compute_totals', 'Order.price']))!;
  const purple = parseColor('#652d90')!;
  assert.deepEqual(await pixel(page, price.x + price.w - 3, price.y + 1), purple);
  const mod = (await nodeBox(page, ['<module>']))!;
  assert.deepEqual(await pixel(page, mod.w - 3, mod.y + 1), [221, 221, 221], 'non-matching nodes are muted');
  await page.screenshot({ path: join(screenshotDir, 'flamegraph-search.png') });
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.getElementById('match')!.textContent === '');
  await frames(page);
  assert.deepEqual(await pixel(page, mod.w - 3, mod.y + 1), nodeRgb('<module>', false, 'light'));
  await page.close();
});

test('thread selector (keyboard) shows one thread; group by line splits a function by line', async () => {
  const page = await h.open();
  await feed(page, SYNTH);
  const options = await page.$$eval('#thread option', (o) => o.map((x) => x.textContent));
  assert.deepEqual(options, ['All threads', 'MainThread (31337)', 'Thread-1 (fetch_rates) (31340)', 'Thread-2 (heartbeat) (31352)']);
  await page.focus('#thread');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => (window as any).__dapprof.thread === 31340);
  await frames(page);
  const worker = byNames(SYNTH, 'function', '31340');
  const root = await page.evaluate(() => (window as any).__dapprof.graph.tree.root.total as number);
  assert.equal(root, worker.get('')!.total);
  const width = await canvasWidth(page);
  // Only the worker's stacks: row 1 is Thread._bootstrap across the whole width.
  assert.deepEqual(await pixel(page, width - 3, 19), nodeRgb('Thread._bootstrap', false, 'light'));
  assert.equal(await nodeBox(page, ['<module>']), null);
  assert.equal(await text(page, '#breadcrumb .crumb'), 'Thread-1 (fetch_rates) (31340)');

  await page.focus('#thread');
  await page.keyboard.press('Home');
  await page.waitForFunction(() => (window as any).__dapprof.thread === undefined);

  await page.selectOption('#group', 'line');
  await page.waitForFunction(() => (window as any).__dapprof.groupBy === 'line');
  await frames(page);
  const lines: Array<[number, number]> = await page.evaluate(() => {
    const app = (window as any).__dapprof;
    const out: Array<[number, number]> = [];
    const walk = (n: any) => {
      for (const c of n.children?.values() ?? []) {
        const info = app.model.keyInfo('line', c.key);
        if (info.function === 'Order.price') out.push([info.line, c.total]);
        walk(c);
      }
    };
    walk(app.graph.tree.root);
    return out.sort((a, b) => a[0] - b[0]);
  });
  const lineRef = referenceAggregate(SYNTH, 'line').trees.get('all')!;
  const expect = (line: number) => [...lineRef].filter(([k]) => k.endsWith(`Order.price|/app/shop/pricing.py|${line}||`)).reduce((a, [, v]) => a + v.total, 0);
  assert.deepEqual(lines, [
    [36, expect(36)],
    [41, expect(41)],
  ]);
  assert.ok(expect(36) > 0 && expect(41) > 0);
  await page.waitForFunction(() => document.querySelectorAll('#table th')[2]?.textContent === 'Line');
  assert.deepEqual(await page.evaluate(() => (window as any).__state), { groupBy: 'line', tableSort: 'self', hideDebugger: true, byTask: false, waitingTasks: true }, 'the choice persists');
  await page.close();
});

test('the table sorts by total on a header click; a double-click opens the source', async () => {
  const page = await h.open();
  await feed(page, SYNTH);
  await tableCurrent(page);
  await page.click('#table th[data-sort="total"]');
  await page.waitForFunction(() => document.querySelector('#table th.sorted')?.getAttribute('data-sort') === 'total');
  const totals = await page.$$eval('#table tbody tr', (trs) => trs.map((tr) => Number((tr as HTMLElement).dataset.total)));
  assert.deepEqual(totals, [...totals].sort((a, b) => b - a));
  assert.equal(totals[0], Math.max(REF.get('<module>')!.total, REF.get('Thread._bootstrap')!.total));
  // Searching (a click on a row) and hovering the graph leave the rows in place.
  const row = await page.$('#table tbody tr:has-text("apply_discounts")');
  await page.click('#table tbody tr:has-text("apply_discounts")');
  await page.waitForFunction(() => (document.getElementById('search') as HTMLInputElement).value === 'apply_discounts');
  // The match count appears in the toolbar, which may then wrap and move the graph down: read
  // where the node is once the page has drawn the search.
  await page.waitForFunction(() => /% of samples$/.test(document.getElementById('match')?.textContent ?? ''));
  await frames(page);
  const b = (await nodeBox(page, ['<module>']))!;
  await page.mouse.move(b.cx + b.x + 5, b.cy + b.y + 5);
  await page.waitForSelector('#tooltip:not([hidden])');
  await frames(page);
  assert.equal(await row!.evaluate((e) => e.isConnected), true);
  await page.dblclick('#table tbody tr:has-text("apply_discounts")');
  await page.waitForFunction(() => (window as any).__posted.length === 2);
  assert.deepEqual(await page.evaluate(() => (window as any).__posted[1]), { type: 'openSource', file: '/app/shop/pricing.py', line: 58 });
  await page.close();
});

test('a burst of batches is drawn once per animation frame', async () => {
  const page = await h.open();
  await feed(page, SYNTH.slice(0, 20));
  const r = await page.evaluate((bodies) => {
    const app = (window as any).__dapprof;
    const before = { draws: app.drawCount, requests: app.frameRequests };
    for (const body of bodies) app.handle({ type: 'data', body }); // one task: 40 batches
    const mid = { draws: app.drawCount, requests: app.frameRequests };
    // The page's frame callback was requested first, so it has run when this one runs.
    return new Promise<number[]>((resolve) => requestAnimationFrame(() => resolve([before.draws, before.requests, mid.draws, mid.requests, app.drawCount])));
  }, SYNTH.slice(20));
  const [d0, q0, d1, q1, d2] = r;
  assert.equal(d1, d0, 'nothing is drawn synchronously');
  assert.equal(q1 - q0, 1, 'forty batches request one frame');
  assert.equal(d2 - d0, 1, 'and are drawn once, in that frame');
  assert.equal(await page.evaluate(() => (window as any).__dapprof.model.totals.batches), 60);
  await page.close();
});

test('stopped, error and replay states', async () => {
  const page = await h.open();
  await post(page, [{ type: 'run', run: { session: 'app.py' } }]);
  await feed(page, SYNTH.slice(0, 5));
  await post(page, [{ type: 'stopped', stopped: { reason: 'exited', message: 'Process 31337 exited.', summary: { sampleCount: 523, duration: 2617, errorCount: 2, droppedSampleCount: 3, outputPath: '/tmp/p.speedscope.json' } } }]);
  await page.waitForFunction(() => document.getElementById('state')!.textContent === 'Stopped');
  assert.equal(await text(page, '#stats'), '523 samples in 2.62 s, 2 read errors, 3 dropped — saved to /tmp/p.speedscope.json — Process 31337 exited.');
  // The graph stays for inspection.
  assert.ok((await nodeBox(page, ['<module>'])) !== null);

  await post(page, [{ type: 'run', run: { session: 'app.py' } }, { type: 'error', message: 'Process 31337 is not a CPython process.' }]);
  await page.waitForFunction(() => document.getElementById('state')!.textContent === 'Error');
  assert.equal(await text(page, '#overlay'), 'Process 31337 is not a CPython process.');

  // A view opened late receives the stream so far as a replay; it shows the same tree as the
  // stream did, and says which samples it never got.
  await post(page, [{ type: 'replay', run: { session: 'app.py' }, bodies: SYNTH, omittedSamples: 0 }]);
  await page.waitForFunction(() => document.getElementById('state')!.textContent === 'Live');
  await frames(page);
  const mod = (await nodeBox(page, ['<module>']))!;
  assert.equal(mod.total, REF.get('<module>')!.total);
  assert.doesNotMatch(await text(page, '#stats'), /not shown/);
  await post(page, [{ type: 'replay', run: { session: 'app.py' }, bodies: SYNTH.slice(30), omittedSamples: 1234 }]);
  await page.waitForFunction(() => /the first 1,234 samples are not shown/.test(document.getElementById('stats')!.textContent ?? ''));
  assert.equal(await page.evaluate(() => (window as any).__dapprof.model.totals.batches), 30, 'the replay replaces what was shown');
  // A replay of a finished run shows it stopped, with its summary.
  await post(page, [{ type: 'replay', run: { session: 'app.py' }, bodies: SYNTH, omittedSamples: 0, stopped: { reason: 'stopProfiling', summary: { sampleCount: 1268, duration: 13042, errorCount: 0, droppedSampleCount: 0 } } }]);
  await page.waitForFunction(() => document.getElementById('state')!.textContent === 'Stopped');
  assert.equal(await text(page, '#stats'), '1,268 samples in 13.0 s');
  assert.deepEqual(h.pageErrors, []);
  await page.close();
});

test('in a narrow panel beside an editor the summary and every control stay visible', async () => {
  const page = await h.open('light', { width: 560, height: 500 });
  await feed(page, SYNTH);
  await post(page, [{ type: 'stopped', stopped: { reason: 'stopProfiling', summary: { sampleCount: 1268, duration: 13042, errorCount: 0, droppedSampleCount: 0 } } }]);
  await page.waitForFunction(() => document.getElementById('state')!.textContent === 'Stopped');
  assert.equal(await text(page, '#stats'), '1,268 samples in 13.0 s');
  const fits = await page.$eval('#stats', (e) => e.scrollWidth <= e.clientWidth);
  assert.ok(fits, 'the summary is not cut off');
  for (const id of ['state', 'stats', 'search', 'thread', 'group', 'hide-debugger', 'reset']) {
    const r = await page.$eval(`#${id}`, (e) => e.getBoundingClientRect().toJSON());
    assert.ok(r.width > 0 && r.left >= 0 && r.right <= 560, `#${id} within the panel: ${JSON.stringify(r)}`);
  }
  // The graph below the toolbar still gets the rest of the height.
  assert.ok((await nodeBox(page, ['<module>'])) !== null);
  await page.screenshot({ path: join(screenshotDir, 'flamegraph-narrow.png') });
  await page.close();
});

test('dark theme: VS Code colours, readable text, a screenshot', async () => {
  const page = await h.open('dark');
  await feed(page, SYNTH);
  assert.deepEqual(await pixel(page, 5, 500), [0x1f, 0x1f, 0x1f], 'the editor background');
  assert.deepEqual(await pixel(page, 2, 19), nodeRgb('<module>', false, 'dark'));
  // Contrast of the page text and of the labels on the nodes (WCAG ratio).
  const lum = ([r, g, b]: number[]) => {
    const f = (c: number) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (a: number[], b: number[]) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
  const fg = parseColor(await page.evaluate(() => getComputedStyle(document.body).color))!;
  assert.ok(ratio(fg, [0x1f, 0x1f, 0x1f]) >= 4.5);
  for (const theme of ['light', 'dark'] as const)
    for (const name of ['<module>', 'main', 'compute_totals', 'Order.price', 'Thread._bootstrap', 'walk_categories'])
      assert.ok(ratio(nodeRgb(name, false, theme), [0x1a, 0x1a, 0x1a]) >= 4.5, `${name} label in ${theme}`);
  assert.ok(ratio(nodeRgb('time.sleep', true, 'dark'), [0x1a, 0x1a, 0x1a]) >= 4.5);
  // Labels on the grey root row and on search matches stay readable too.
  await page.fill('#search', 'price');
  await frames(page);
  const labels: Array<[string, string]> = await page.evaluate(() => {
    const g = (window as any).__dapprof.graph;
    const root = g.tree.root;
    const price = [...root.children.values()][0];
    const find = (n: any): any => (g.matches(n.key) ? n : [...(n.children?.values() ?? [])].map(find).find(Boolean));
    const m = find(price);
    return [
      [g.fillOf(root), g.textOn(g.fillOf(root))],
      [g.fillOf(m), g.textOn(g.fillOf(m))],
      [g.fillOf(price), g.textOn(g.fillOf(price))],
    ];
  });
  for (const [fill, label] of labels) assert.ok(ratio(parseColor(fill)!, parseColor(label)!) >= 4.5, `${label} on ${fill}`);
  await page.fill('#search', '');
  const b = (await nodeBox(page, ['<module>', 'main', 'compute_totals']))!;
  await page.mouse.move(b.cx + b.x + b.w / 2, b.cy + b.y + b.h / 2);
  await page.waitForSelector('#tooltip:not([hidden])');
  await page.screenshot({ path: join(screenshotDir, 'flamegraph-dark.png') });
  await page.close();
});

test("the page runs under the Content-Security-Policy of the extension's webview HTML", async () => {
  const origin = `http://127.0.0.1:${h.port}`;
  const webview = { cspSource: origin, asWebviewUri: (u: Uri) => ({ toString: () => origin + u.fsPath.replace(/^\/ext/, '') }) };
  const html = webviewHtml(webview as never, Uri.file('/ext') as never, 'T3stN0nce');
  assert.match(html, /script-src 'nonce-T3stN0nce'/);
  h.pages.set('/webview.html', html);
  const page = await h.open(null, undefined, '/webview.html', () => {
    // What VS Code's webview host provides, plus a record of CSP violations.
    const w = window as any;
    w.__posted = [];
    w.__violations = [];
    w.acquireVsCodeApi = () => ({ postMessage: (m: unknown) => w.__posted.push(m), getState: () => undefined, setState: () => undefined });
    document.addEventListener('securitypolicyviolation', (e) => w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await feed(page, SYNTH);
  const b = (await nodeBox(page, ['<module>', 'main']))!;
  await page.mouse.move(b.cx + b.x + b.w / 2, b.cy + b.y + b.h / 2);
  await page.waitForSelector('#tooltip:not([hidden])');
  assert.deepEqual(await pixel(page, 2, 19), nodeRgb('<module>', false, 'light'));
  assert.deepEqual(await page.evaluate(() => (window as any).__violations), []);
  assert.deepEqual(await page.evaluate(() => (window as any).__posted), [{ type: 'ready', hideDebugger: true }]);
  // The policy is in force: a script without the nonce is refused.
  await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.body.append(s);
  });
  await page.waitForFunction(() => (window as any).__violations.length === 1);
  assert.equal(await page.evaluate(() => (window as any).__inline), undefined);
  h.pageErrors.length = 0; // the refusal is also logged to the console
  await page.close();
});
