// The toolbar's layout in headless Chromium: typing a search (and data streaming in meanwhile)
// must not wrap the toolbar nor move the graph, at the widths of a panel beside an editor.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { harnessForFile, screenshotDir } from '../support/browser';
import { feed, frames, post } from '../support/page';
import { readStream } from '../support/reference';

const h = harnessForFile();
const SYNTH = readStream('synthetic-stream.jsonl');

interface Layout {
  canvasTop: number;
  toolbarHeight: number;
  /** Distinct rows of the toolbar's controls (by their vertical centre). */
  rows: number;
  /** Controls reaching past the toolbar's right edge. */
  overflowing: string[];
}

async function layout(page: Page): Promise<Layout> {
  return page.evaluate(() => {
    const bar = document.querySelector('.toolbar') as HTMLElement;
    const br = bar.getBoundingClientRect();
    const centres: number[] = [];
    const overflowing: string[] = [];
    for (const c of Array.from(bar.children) as HTMLElement[]) {
      const r = c.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const y = r.top + r.height / 2;
      if (!centres.some((v) => Math.abs(v - y) < 6)) centres.push(y);
      if (r.right > br.right + 0.5) overflowing.push(c.id || c.className);
    }
    return { canvasTop: document.getElementById('flame')!.getBoundingClientRect().top, toolbarHeight: br.height, rows: centres.length, overflowing };
  });
}

// A run sampled by task has two more controls ("By task", "Waiting tasks"): its toolbar wraps sooner.
for (const [width, rows, sampledByTask] of [
  [1200, 1, false],
  [900, 1, false],
  [560, 3, false],
  [1200, 1, true],
  [900, 3, true],
  [560, 4, true],
] as const) {
  test(`at ${width} px typing a search keeps the toolbar in ${rows} row${rows > 1 ? 's' : ''} and the graph in place${sampledByTask ? ', with the task toggles' : ''}`, async () => {
    const page = await h.open('light', { width, height: 600 });
    await post(page, [{ type: 'run', run: { session: 'app.py', pid: 31337, pythonVersion: '3.12.1', rate: 100, ...(sampledByTask ? { async: 'all' } : {}) } }]);
    await feed(page, SYNTH.slice(0, 30));
    const before = await layout(page);
    assert.equal(await page.getByRole('checkbox', { name: 'By task' }).isVisible(), sampledByTask);
    assert.equal(await page.getByRole('checkbox', { name: 'Waiting tasks' }).isVisible(), sampledByTask);
    assert.equal(before.rows, rows, JSON.stringify(before));
    assert.deepEqual(before.overflowing, []);
    await page.click('#search');
    const seen: Layout[] = [];
    for (const [i, key] of [...'price'].entries()) {
      await page.keyboard.type(key);
      // Data keeps arriving while the user types: the stats grow too.
      await feed(page, SYNTH.slice(30 + i * 5, 35 + i * 5));
      await frames(page);
      seen.push(await layout(page));
    }
    await page.waitForFunction(() => /% of samples$/.test(document.getElementById('match')!.textContent ?? ''));
    await page.keyboard.type('zzz');
    await page.waitForFunction(() => document.getElementById('match')!.textContent === 'no match');
    await frames(page);
    seen.push(await layout(page));
    for (const l of seen) {
      assert.equal(l.canvasTop, before.canvasTop, `the graph stays put: ${JSON.stringify(l)}`);
      assert.equal(l.toolbarHeight, before.toolbarHeight);
      assert.equal(l.rows, rows);
      assert.deepEqual(l.overflowing, []);
    }
    // The stats, when cut, are whole in their tooltip.
    const stats = await page.$eval('#stats', (e) => [e.textContent ?? '', (e as HTMLElement).title]);
    assert.ok(stats[1].startsWith(stats[0]), JSON.stringify(stats));
    await page.screenshot({ path: join(screenshotDir, `toolbar-${width}${sampledByTask ? '-tasks' : ''}.png`) });
    await page.close();
  });
}
