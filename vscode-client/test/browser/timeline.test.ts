// The timeline strip in real headless Chromium: its bucket counts against a naive reference that
// places every sample in time one by one (test/support/reference.ts), a range dragged with the
// real mouse and picked with the keyboard, the graph and table limited to it (against the
// reference filtered by time), the range through zoom and search, the live window, three themes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { harnessForFile, screenshotDir, THEME_BACKGROUND, THEME_NAMES } from '../support/browser';
import { byNames, feed, frames, modelByNames, post, tableCurrent } from '../support/page';
import { readStream, referenceAggregate, referenceTimeline, RefRange } from '../support/reference';

/* eslint-disable @typescript-eslint/no-explicit-any */
const h = harnessForFile();

const T0 = 1_764_435_600_000;
/** The synthetic stream (it carries no times) stamped as if its events came every `every` ms, each spanning `span` ms. */
function timed(name: string, every: number, span: number): ProfilingDataBody[] {
  return readStream(name).map((b, i) => ({ ...b, startTime: T0 + i * every + (i % 3) * 7.5, endTime: T0 + i * every + (i % 3) * 7.5 + span }));
}
const SYNTH = timed('synthetic-stream.jsonl', 137, 120);

async function timelineOf(page: Page): Promise<{ origin: number; width: number; all: number[]; threads: Record<string, number[]> }> {
  return page.evaluate(() => {
    const tl = (window as any).__dapprof.model.timeline;
    const threads: Record<string, number[]> = {};
    tl.threads.forEach((m: Map<number, number>, b: number) => {
      for (const [tid, n] of m) {
        const a = (threads[String(tid)] ??= []);
        while (a.length < b) a.push(0);
        a[b] = n;
      }
    });
    return { origin: tl.origin, width: tl.width, all: [...tl.totals], threads };
  });
}

function pad(a: number[], n: number): number[] {
  return [...a, ...Array(Math.max(0, n - a.length)).fill(0)];
}

async function compareTimeline(page: Page, bodies: ProfilingDataBody[]): Promise<{ origin: number; width: number; all: number[] }> {
  const got = await timelineOf(page);
  const ref = referenceTimeline(bodies, got.origin, got.width);
  assert.equal(got.origin, bodies[0].startTime);
  assert.deepEqual(got.all, ref.get('all'));
  for (const [tid, counts] of ref) if (tid !== 'all') assert.deepEqual(pad(got.threads[tid] ?? [], counts.length), counts, `thread ${tid}`);
  return got;
}

/** The page's range as buckets of its timeline. */
async function rangeBuckets(page: Page): Promise<RefRange | null> {
  return page.evaluate(() => {
    const app = (window as any).__dapprof;
    if (!app.range) return null;
    const tl = app.model.timeline;
    const [first, end] = tl.bucketsIn(app.range);
    return { origin: tl.origin, width: tl.width, first, end };
  });
}

/** The page's graph and table against the reference limited to a range. */
async function compareRange(page: Page, bodies: ProfilingDataBody[], r: RefRange): Promise<void> {
  await frames(page);
  const ref = byNames(bodies, 'function', 'all', true, r);
  const model = await modelByNames(page);
  assert.deepEqual([...model].sort(), [...ref].map(([k, v]) => [k, [v.total, v.self]]).sort());
  await tableCurrent(page);
  const rows: Array<[string, number, number]> = await page.$$eval('#table tbody tr', (trs) => trs.map((tr) => [tr.querySelector('.name')!.textContent!, Number((tr as HTMLElement).dataset.self), Number((tr as HTMLElement).dataset.total)]));
  const stats = referenceAggregate(bodies, 'function', { hideDebugger: true, range: r }).stats.get('all')!;
  const want = [...stats].map(([k, v]) => [k.split('|')[0], v.self, v.total]);
  for (const row of rows) assert.ok(want.some((w) => w[0] === row[0] && w[1] === row[1] && w[2] === row[2]), `table row ${row}`);
  assert.equal(rows.length, Math.min(200, want.length));
}

/** x of a time on the strip, in page coordinates. */
async function stripX(page: Page, t: number): Promise<{ x: number; y: number }> {
  return page.evaluate((time) => {
    const s = (window as any).__dapprof.timeline;
    const r = s.canvas.getBoundingClientRect();
    return { x: r.left + ((time - s.shown.start) / (s.shown.end - s.shown.start)) * r.width, y: r.top + r.height / 2 };
  }, t);
}

test('bucket counts of all threads and of each thread equal the reference, per sample and in the stacks format', async () => {
  const page = await h.open();
  await post(page, [{ type: 'run', run: { session: 'app.py', rate: 100 } }]);
  await feed(page, SYNTH);
  const got = await compareTimeline(page, SYNTH);
  assert.equal(got.width, 100);
  assert.ok(got.all.length > 60, 'events spread over several buckets');
  await page.close();

  // A real run of dapprof, in both formats: the same buckets.
  for (const name of ['live-stream.jsonl', 'live-stacks-stream.jsonl']) {
    const p = await h.open();
    const bodies = readStream(name);
    await feed(p, bodies);
    await compareTimeline(p, bodies);
    await p.close();
  }
});

test('a long run merges buckets in pairs: at most 2048 of them, the counts still exact', async () => {
  const page = await h.open();
  const long = timed('synthetic-stream.jsonl', 5000, 4000); // 300 s: 3000 buckets of 100 ms
  await feed(page, long);
  const got = await compareTimeline(page, long);
  assert.equal(got.width, 200);
  assert.ok(got.all.length <= 2048);
  await page.close();
});

test('a dragged range limits graph and table; it survives zoom and search; Escape and Clear drop it; screenshots', async () => {
  const page = await h.open();
  await post(page, [{ type: 'run', run: { session: 'app.py', rate: 100 } }]);
  await feed(page, SYNTH);
  await post(page, [{ type: 'stopped', stopped: { reason: 'stopped', summary: { sampleCount: SYNTH.reduce((s, x) => s + x.sampleCount, 0), duration: SYNTH.length * 137, errorCount: 0, droppedSampleCount: 0 } } }]);
  await frames(page);
  await page.screenshot({ path: join(screenshotDir, 'timeline.png') });
  // Stopped: the whole run is shown.
  const shown = await page.evaluate(() => (window as any).__dapprof.timeline.shown);
  const tl = await timelineOf(page);
  assert.equal(shown.start, tl.origin);
  assert.equal(shown.end, tl.origin + tl.all.length * tl.width);

  const a = await stripX(page, tl.origin + 20.2 * tl.width), b = await stripX(page, tl.origin + 45.6 * tl.width);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, a.y);
  await page.mouse.move(b.x, b.y);
  await page.mouse.up();
  const r = (await rangeBuckets(page))!;
  assert.deepEqual([r.first, r.end], [20, 46]);
  await compareRange(page, SYNTH, r);
  const inRange = await page.evaluate(() => (window as any).__dapprof.graph.tree.root.total);
  assert.ok(inRange > 0 && inRange < SYNTH.reduce((s, x) => s + x.sampleCount, 0));
  assert.match((await page.textContent('#timeline-label'))!, new RegExp(`${inRange} samples`));
  await page.screenshot({ path: join(screenshotDir, 'timeline-range.png') });

  // Zoom into main, then search: the range stays, the graph is still the range's.
  const zoomed = await page.evaluate(() => {
    const app = (window as any).__dapprof;
    const mod = [...app.graph.tree.root.children.values()].find((c: any) => app.model.keyInfo(app.groupBy, c.key).function === '<module>');
    app.zoomTo(mod);
    return mod.total;
  });
  await page.fill('#search', 'price');
  await frames(page);
  assert.deepEqual(await rangeBuckets(page), r);
  await compareRange(page, SYNTH, r);
  assert.equal(await page.evaluate(() => (window as any).__dapprof.graph.zoomNode().total), zoomed);
  assert.match((await page.textContent('#match'))!, /%/);
  await page.fill('#search', '');

  // Escape zooms out first, then drops the range.
  await page.focus('#graph');
  await page.keyboard.press('Escape');
  assert.deepEqual(await rangeBuckets(page), r);
  await page.keyboard.press('Escape');
  assert.equal(await rangeBuckets(page), null);
  await compareRange(page, SYNTH, { origin: tl.origin, width: tl.width, first: 0, end: tl.all.length });

  // The Clear button.
  await page.evaluate(() => (window as any).__dapprof.setRange({ start: 0, end: Number.MAX_VALUE }));
  await frames(page);
  assert.equal(await page.isVisible('#timeline-clear'), true);
  await page.click('#timeline-clear');
  assert.equal(await rangeBuckets(page), null);
  // The range is dropped at the click; the button is hidden when the strip is next drawn, in
  // the next animation frame (read before it, it was still shown now and then).
  await frames(page);
  assert.equal(await page.isVisible('#timeline-clear'), false);
  await page.close();
});

test('keyboard: Tab reaches the strip; arrows pick and move a range, Shift widens it, Home/End, Escape clears', async () => {
  const page = await h.open();
  await feed(page, SYNTH);
  const n = (await timelineOf(page)).all.length;
  // After the toolbar's last control (Reset zoom is disabled when not zoomed).
  await page.focus('#baseline');
  await page.keyboard.press('Tab');
  if ((await page.evaluate(() => document.activeElement!.id)) === 'reset') await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement!.id), 'timeline');
  const buckets = async () => {
    const r = await rangeBuckets(page);
    return r && [r.first, r.end];
  };
  await page.keyboard.press('ArrowRight');
  assert.deepEqual(await buckets(), [n - 1, n]);
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  assert.deepEqual(await buckets(), [n - 3, n - 2]);
  await page.keyboard.press('Shift+ArrowRight');
  await page.keyboard.press('Shift+ArrowRight');
  assert.deepEqual(await buckets(), [n - 3, n]);
  await page.keyboard.press('Shift+ArrowLeft');
  assert.deepEqual(await buckets(), [n - 3, n - 1]);
  await page.keyboard.press('Home');
  assert.deepEqual(await buckets(), [0, 1]);
  await page.keyboard.press('Shift+ArrowRight');
  await compareRange(page, SYNTH, (await rangeBuckets(page))!);
  await page.keyboard.press('Escape');
  assert.equal(await buckets(), null);
  await page.close();
});

test('live: the last 60 s by default, Show all for the whole run; the selected thread only', async () => {
  const page = await h.open();
  const long = timed('synthetic-stream.jsonl', 5000, 4000);
  await post(page, [{ type: 'run', run: { session: 'app.py', rate: 100 } }]);
  await feed(page, long);
  const tl = await timelineOf(page);
  const end = tl.origin + tl.all.length * tl.width;
  const shown = () => page.evaluate(() => ({ ...(window as any).__dapprof.timeline.shown }));
  assert.deepEqual(await shown(), { start: end - 60_000, end });
  assert.equal(await page.isVisible('#timeline-all'), true);
  await page.click('#timeline-all');
  assert.deepEqual(await shown(), { start: tl.origin, end });
  // One thread: the strip's tallest bar is that thread's busiest bucket.
  const tid = Object.keys(tl.threads)[1];
  await page.selectOption('#thread', tid);
  await frames(page);
  const counts = tl.threads[tid];
  assert.equal(await page.evaluate(() => (window as any).__dapprof.timeline.maxShown), Math.max(...counts.map((c) => c ?? 0)));
  assert.ok(Math.max(...counts) < Math.max(...tl.all));
  await page.close();
});

for (const theme of THEME_NAMES) {
  test(`${theme} theme: the strip's background and bars`, async () => {
    const page = await h.open(theme);
    await feed(page, SYNTH);
    const px = await page.evaluate(() => {
      const s = (window as any).__dapprof.timeline;
      const c = s.canvas as HTMLCanvasElement;
      const ctx = c.getContext('2d')!;
      const at = (x: number, y: number) => [...ctx.getImageData(x, y, 1, 1).data.slice(0, 3)];
      // The busiest bucket's bar reaches the top of the strip.
      const tl = (window as any).__dapprof.model.timeline;
      let best = 0;
      for (let b = 0; b < tl.bucketCount; b++) if (tl.count(b) > tl.count(best)) best = b;
      const x = Math.floor(((tl.bucketStart(best) + tl.width / 3 - s.shown.start) / (s.shown.end - s.shown.start)) * c.width);
      return { bg: at(1, 1), bar: at(x, Math.floor(c.height / 2)), top: at(x, 3) };
    });
    const bg = THEME_BACKGROUND[theme];
    const hex = (p: number[]) => '#' + p.map((v) => v.toString(16).padStart(2, '0')).join('');
    assert.equal(hex(px.bg), bg);
    assert.notEqual(hex(px.bar), bg);
    assert.notEqual(hex(px.top), bg);
    if (theme === 'dark') await page.screenshot({ path: join(screenshotDir, 'timeline-dark.png') });
    await page.close();
  });
}

test('live data in a range updates the graph; data after it leaves the graph as it was', async () => {
  const page = await h.open();
  await post(page, [{ type: 'run', run: { session: 'app.py', rate: 100 } }]);
  await feed(page, SYNTH.slice(0, 30));
  const tl = await timelineOf(page);
  // The first ten buckets, and everything from bucket 20 on (open-ended, as live data comes in).
  await page.evaluate((t) => (window as any).__dapprof.setRange({ start: t.origin, end: t.origin + 10 * t.width }), tl);
  await compareRange(page, SYNTH.slice(0, 30), { origin: tl.origin, width: tl.width, first: 0, end: 10 });
  const before = await modelByNames(page);
  await feed(page, SYNTH.slice(30));
  assert.deepEqual(await modelByNames(page), before);
  await page.evaluate((t) => (window as any).__dapprof.setRange({ start: t.origin + 20 * t.width, end: Number.MAX_VALUE }), tl);
  const all = await timelineOf(page);
  await compareRange(page, SYNTH, { origin: tl.origin, width: tl.width, first: 20, end: all.all.length });
  await feed(page, [{ ...SYNTH[5], newFrames: {}, startTime: SYNTH[59].endTime! + 10, endTime: SYNTH[59].endTime! + 90 }]);
  const more = [...SYNTH, { ...SYNTH[5], newFrames: {}, startTime: SYNTH[59].endTime! + 10, endTime: SYNTH[59].endTime! + 90 }];
  await compareRange(page, more, { origin: tl.origin, width: tl.width, first: 20, end: (await timelineOf(page)).all.length });
  await page.close();
});
