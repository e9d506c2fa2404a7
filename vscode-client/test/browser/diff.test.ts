// The differential flame graph in real headless Chromium: a baseline picked from the earlier runs
// the page saw (with the keyboard) or given through its API; each node's colour has the sign and
// the order of its change of share, the change table equals a naive reference (test/support/
// reference.ts), in the light, dark and high contrast themes, on the synthetic stream and a
// recorded one; "No baseline" brings the normal colours back.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { parseColor } from '../../src/webview/theme';
import { harnessForFile, screenshotDir, THEME_NAMES } from '../support/browser';
import { feed, frames, nodeBox, pixel, post } from '../support/page';
import { readStream, referenceDiff } from '../support/reference';

/* eslint-disable @typescript-eslint/no-explicit-any */
const h = harnessForFile();
const THRESHOLD = 0.002;

/** Runs `baseline` then `current` through the page as two runs. */
async function twoRuns(page: Page, baseline: ProfilingDataBody[], current: ProfilingDataBody[]): Promise<void> {
  await post(page, [{ type: 'run', run: { session: 'first.py', pid: 1 } }]);
  await feed(page, baseline);
  await post(page, [{ type: 'run', run: { session: 'second.py', pid: 2 } }]);
  await feed(page, current);
}

/** Every node of the graph: its name path, its fill, and its drawn width. */
async function fills(page: Page): Promise<Array<{ path: string; fill: string; w: number }>> {
  return page.evaluate(() => {
    const app = (window as any).__dapprof;
    const out: Array<{ path: string; fill: string; w: number }> = [];
    const walk = (n: any, p: string) => {
      for (const c of n.children?.values() ?? []) {
        const q = p === '' ? app.model.keyInfo(app.groupBy, c.key).function : `${p} > ${app.model.keyInfo(app.groupBy, c.key).function}`;
        out.push({ path: q, fill: app.graph.fillOf(c), w: app.graph.rectOf(c)?.w ?? 0 });
        walk(c, q);
      }
    };
    walk(app.graph.tree.root, '');
    return out;
  });
}

const sat = ([r, g, b]: number[]) => Math.max(r, g, b) - Math.min(r, g, b);

/** The graph's colours and the change table against the reference. */
async function checkDiff(page: Page, current: ProfilingDataBody[], baseline: ProfilingDataBody[]): Promise<void> {
  await frames(page);
  const ref = referenceDiff(current, baseline, 'function');
  const nodes = await fills(page);
  const names = new Map<string, number>();
  for (const n of nodes) names.set(n.path, (names.get(n.path) ?? 0) + 1);
  const unique = nodes.filter((n) => names.get(n.path) === 1);
  let up = 0, down = 0, same = 0;
  for (const n of unique) {
    const d = ref.get(n.path)!.delta, c = parseColor(n.fill)!;
    if (d >= THRESHOLD) assert.ok(c[0] > c[2] && sat(c) > 20, `${n.path} +${d}: red, not ${n.fill}`), up++;
    else if (d <= -THRESHOLD) assert.ok(c[2] > c[0] && sat(c) > 20, `${n.path} ${d}: blue, not ${n.fill}`), down++;
    else if (Math.abs(d) < THRESHOLD * 0.99) assert.equal(sat(c), 0, `${n.path} ${d}: grey, not ${n.fill}`), same++;
  }
  assert.ok(up > 0 && down > 0, `both signs present (${up} up, ${down} down, ${same} same)`);
  // The order: a larger change of the same sign is no less saturated.
  const signed = unique.map((n) => ({ d: ref.get(n.path)!.delta, s: sat(parseColor(n.fill)!) })).filter((x) => Math.abs(x.d) >= THRESHOLD);
  for (const a of signed) for (const b of signed) if (Math.sign(a.d) === Math.sign(b.d) && Math.abs(a.d) > Math.abs(b.d) + 1e-9) assert.ok(a.s >= b.s, `saturation ${a.d}:${a.s} vs ${b.d}:${b.s}`);
  // A drawn node's pixels are its fill.
  const wide = unique.filter((n) => n.w > 30).sort((a, b) => Math.abs(ref.get(b.path)!.delta) - Math.abs(ref.get(a.path)!.delta))[0];
  const box = (await nodeBox(page, wide.path.split(' > ')))!;
  assert.deepEqual(await pixel(page, box.x + 1, box.y + 1), parseColor(wide.fill));
  // Its tooltip tells the change: the shares there and here, as the reference has them.
  await page.mouse.move(box.cx + box.x + box.w / 2, box.cy + box.y + box.h / 2);
  await page.waitForSelector('#tooltip .change');
  const w = ref.get(wide.path)!;
  const pc = (x: number) => `${(100 * x).toFixed(2)}%`;
  const sign = w.delta > 0 ? '+' : w.delta < 0 ? '\u2212' : '\u00b1';
  const change = (await page.textContent('#tooltip .change')) ?? '';
  assert.ok(change.startsWith('vs ') && change.endsWith(`: ${pc(w.baseline)} \u2192 ${pc(w.current)} of all samples (${sign}${pc(Math.abs(w.delta))})`), change);
  await page.mouse.move(0, 0);

  // The table: every row's numbers are the reference's, ordered by |change|.
  const rows: Array<{ path: string; delta: number; cells: string[] }> = await page.$$eval('#diff-table tbody tr', (trs) =>
    trs.map((tr) => ({ path: (tr as HTMLElement).dataset.path!, delta: Number((tr as HTMLElement).dataset.delta), cells: [...tr.querySelectorAll('td')].map((td) => td.textContent!) })),
  );
  assert.equal(rows.length, Math.min(200, ref.size));
  const repeated = new Set([...ref.keys()].filter((k) => rows.filter((r) => r.path === k).length > 1));
  for (const r of rows) {
    if (repeated.has(r.path)) continue;
    const w = ref.get(r.path)!;
    assert.ok(Math.abs(r.delta - w.delta) < 1e-9, `row ${r.path}: ${r.delta} vs ${w.delta}`);
    assert.equal(r.cells[1], `${(100 * w.current).toFixed(2)}%`);
    assert.equal(r.cells[2], `${(100 * w.baseline).toFixed(2)}%`);
  }
  for (let i = 1; i < rows.length; i++) assert.ok(Math.abs(rows[i - 1].delta) >= Math.abs(rows[i].delta) - 1e-12);
}

const PAIRS: Array<[string, ProfilingDataBody[], ProfilingDataBody[]]> = (() => {
  const synth = readStream('synthetic-stream.jsonl');
  const live = readStream('live-stream.jsonl');
  return [
    ['synthetic', synth.slice(0, 20), synth],
    ['recorded', live.slice(0, Math.ceil(live.length / 3)), live],
  ];
})();

for (const theme of THEME_NAMES) {
  test(`diff (${theme}): a baseline picked with the keyboard colours the graph by change, the table equals the reference, no baseline restores the colours`, async () => {
    for (const [name, baseline, current] of PAIRS) {
      const page = await h.open(theme);
      await page.selectOption('#group', 'function');
      await twoRuns(page, baseline, current);
      await frames(page);
      const normal = await fills(page);
      assert.equal(await page.isHidden('#diff-legend'), true);
      assert.deepEqual(await page.$$eval('#baseline option', (os) => os.map((o) => o.textContent)), ['No baseline', 'vs run 1 (first.py)', 'Compare with a file\u2026']);
      // Keyboard: focus the control, pick the earlier run.
      await page.focus('#baseline');
      await page.keyboard.press('ArrowDown');
      await page.waitForFunction(() => (window as any).__dapprof.diff.baseline !== null);
      assert.equal(await page.isVisible('#diff-legend'), true);
      assert.equal(await page.isHidden('#table'), true);
      await checkDiff(page, current, baseline);
      if (name === 'synthetic' && theme === 'dark') {
        await page.screenshot({ path: join(screenshotDir, 'diff.png') });
        await page.locator('.table-wrap').screenshot({ path: join(screenshotDir, 'diff-table.png') });
      }
      // Back to no baseline with the keyboard: the normal colours and table.
      await page.keyboard.press('ArrowUp');
      await page.waitForFunction(() => (window as any).__dapprof.diff.baseline === null);
      await frames(page);
      assert.deepEqual(await fills(page), normal);
      assert.equal(await page.isHidden('#diff-legend'), true);
      assert.equal(await page.isVisible('#table'), true);
      await page.close();
    }
  });
}

test('diff: the API takes a baseline as profilingData bodies, and a baseline message does the same', async () => {
  const [, baseline, current] = PAIRS[0];
  const page = await h.open('light');
  await page.selectOption('#group', 'function');
  await post(page, [{ type: 'run', run: { session: 'app.py' } }]);
  await feed(page, current);
  await page.evaluate((b) => (window as any).__dapprof.setBaseline(b, 'a file'), baseline);
  await checkDiff(page, current, baseline);
  assert.match(await page.textContent('#diff-legend') ?? '', /Compared with a file/);
  await post(page, [{ type: 'baseline', label: 'none', bodies: null }]);
  await page.waitForFunction(() => (window as any).__dapprof.diff.baseline === null);
  await post(page, [{ type: 'baseline', label: 'from a file', bodies: baseline }]);
  await page.waitForFunction(() => (window as any).__dapprof.diff.baseline !== null);
  await checkDiff(page, current, baseline);
  assert.deepEqual(h.pageErrors, []);
  await page.close();
});

test('diff: "Compare with a file…" asks the extension for a file, whose bodies then become a choice of their own', async () => {
  const [, baseline, current] = PAIRS[0];
  const page = await h.open('dark');
  await page.selectOption('#group', 'function');
  await post(page, [{ type: 'run', run: { session: 'app.py' } }]);
  await feed(page, current);
  const asked = () => page.evaluate(() => (window as any).__posted.filter((m: any) => m.type === 'pickBaseline').length);
  assert.equal(await asked(), 0);
  await page.selectOption('#baseline', { label: 'Compare with a file\u2026' });
  await page.waitForFunction(() => (window as any).__posted.some((m: any) => m.type === 'pickBaseline'));
  assert.equal(await asked(), 1);
  // Until the extension answers, nothing changes: the choice is still "No baseline".
  assert.equal(await page.$eval('#baseline', (s) => (s as HTMLSelectElement).selectedOptions[0].textContent), 'No baseline');
  assert.equal(await page.evaluate(() => (window as any).__dapprof.diff.baseline), null);
  // The extension read the file (dapprof convert) and sends its bodies.
  await post(page, [{ type: 'baseline', label: 'ci.speedscope.json', bodies: baseline }]);
  await page.waitForFunction(() => (window as any).__dapprof.diff.baseline !== null);
  await checkDiff(page, current, baseline);
  const options = () => page.$$eval('#baseline option', (os) => os.map((o) => o.textContent));
  assert.deepEqual(await options(), ['No baseline', 'vs ci.speedscope.json', 'Compare with a file\u2026']);
  assert.equal(await page.$eval('#baseline', (s) => (s as HTMLSelectElement).selectedOptions[0].textContent), 'vs ci.speedscope.json');
  // Off, and on again from the list without asking for the file again.
  await page.selectOption('#baseline', { label: 'No baseline' });
  await page.waitForFunction(() => (window as any).__dapprof.diff.baseline === null);
  await page.selectOption('#baseline', { label: 'vs ci.speedscope.json' });
  await page.waitForFunction(() => (window as any).__dapprof.diff.baseline !== null);
  await checkDiff(page, current, baseline);
  assert.equal(await asked(), 1);
  // A new run keeps the file among the choices, beside the run it replaced.
  await post(page, [{ type: 'run', run: { session: 'again.py' } }]);
  await feed(page, current);
  assert.deepEqual(await options(), ['No baseline', 'vs run 1 (app.py)', 'vs ci.speedscope.json', 'Compare with a file\u2026']);
  assert.deepEqual(h.pageErrors, []);
  await page.close();
});
