// Keyboard-only use of the flame graph page, in the light, dark and high contrast themes: Tab
// reaches every control, each shows a focus ring in the theme's focus colour, and every action
// (search, thread, grouping, Hide debugger, zoom in and out of nodes, reset, breadcrumb, the
// open-source link, the table's sort, search and open) works from the keyboard. Also the
// theme's colours on the canvas and the contrast of the page's text.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { nodeRgb, parseColor } from '../../src/webview/theme';
import { harnessForFile, screenshotDir, THEME_BACKGROUND, THEME_FOCUS, THEME_NAMES } from '../support/browser';
import { feed, frames, near, pixel, post, tableCurrent } from '../support/page';
import { readStream } from '../support/reference';

/* eslint-disable @typescript-eslint/no-explicit-any */
const h = harnessForFile();
const SYNTH = readStream('synthetic-stream.jsonl');

/** What has the focus: its id, else a short description. */
async function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const e = document.activeElement as HTMLElement | null;
    if (!e || e === document.body) return 'body';
    if (e.id) return `#${e.id}`;
    if (e.tagName === 'TH') return `th.${e.dataset.sort}`;
    if (e.tagName === 'TR') return 'tr';
    return `${e.tagName.toLowerCase()}.${e.className}`;
  });
}

/** Presses Tab (or Shift+Tab) until `what` has the focus; fails after a full round. */
async function tabTo(page: Page, what: string, back = false): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < 40; i++) {
    if ((await focused(page)) === what) return;
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    seen.push(await focused(page));
  }
  assert.fail(`${what} not reached by Tab: ${seen.join(' ')}`);
}

const lum = ([r, g, b]: number[]) => {
  const f = (c: number) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
};
const ratio = (a: number[], b: number[]) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);

for (const theme of THEME_NAMES) {
  test(`${theme} theme: the keyboard reaches every control and does every action, with a visible focus ring`, async () => {
    const page = await h.open(theme);
    await post(page, [{ type: 'run', run: { session: 'app.py', pid: 31337, rate: 100 } }]);
    await feed(page, SYNTH);
    const app = (f: string) => page.evaluate(f);
    const kind = theme === 'light' ? 'light' : theme === 'dark' ? 'dark' : 'high-contrast';
    assert.equal(await app('__dapprof.graph.palette.kind'), kind);
    // The theme on the canvas and the page.
    const bg = parseColor(THEME_BACKGROUND[theme])!;
    assert.deepEqual(await pixel(page, 5, 500), bg, 'the editor background');
    assert.deepEqual(await pixel(page, 2, 19), nodeRgb('<module>', false, kind));
    const fg = parseColor(await page.evaluate(() => getComputedStyle(document.body).color))!;
    assert.ok(ratio(fg, bg) >= (theme === 'high-contrast' ? 7 : 4.5), 'page text contrast');

    // Tab order, from the start of the page: every control once.
    const order: string[] = [];
    for (let i = 0; i < 14; i++) {
      await page.keyboard.press('Tab');
      const f = await focused(page);
      order.push(f);
      // Each shows a focus ring of the theme's focus colour.
      const ring = await page.evaluate(() => {
        const s = getComputedStyle(document.activeElement!);
        return [s.outlineStyle, s.outlineColor];
      });
      if (f === 'body') continue; // past the last control, the browser's own stop
      const checkbox = f === '#hide-debugger';
      if (!checkbox) assert.notEqual(ring[0], 'none', `${f} shows its focus`);
      if (!checkbox) assert.ok(near(parseColor(ring[1])!, parseColor(THEME_FOCUS[theme])!), `${f} ring ${ring[1]}`);
    }
    for (const c of ['#search', '#thread', '#group', '#hide-debugger', '#baseline', 'button.crumb', '#graph', 'th.self', 'th.total', 'tr'])
      assert.ok(order.includes(c), `${c} in the tab order: ${order.join(' ')}`);
    assert.ok(order.indexOf('#search') < order.indexOf('#graph') && order.indexOf('#graph') < order.indexOf('th.self'), order.join(' '));

    // The graph: arrows move the focus ring, Enter zooms, Escape zooms out, Ctrl+Enter opens.
    await tabTo(page, '#graph');
    await page.keyboard.press('ArrowDown');
    await frames(page);
    const name = () => app('(() => { const a = __dapprof, n = a.graph.focused; return n.parent ? a.infoOf(n).function : "root"; })()');
    const top = await name(); // the widest of <module> and Thread._bootstrap
    assert.ok(['<module>', 'Thread._bootstrap'].includes(top as string), String(top));
    assert.match(await page.textContent('#tooltip .fn') ?? '', new RegExp(`^${String(top).replace(/[.<>]/g, '.')}`));
    assert.match(await page.textContent('#announce') ?? '', /samples/);
    const r: any = await app('__dapprof.graph.rectOf(__dapprof.graph.focused)');
    assert.ok(near(await pixel(page, r.x + 1, r.y + 9), parseColor(THEME_FOCUS[theme])!, 40), 'the focused node is ringed');
    await page.screenshot({ path: join(screenshotDir, `keyboard-${theme}.png`) });
    await page.keyboard.press(top === '<module>' ? 'ArrowRight' : 'ArrowLeft');
    assert.notEqual(await name(), top, 'Left/Right move along the row');
    await page.keyboard.press(top === '<module>' ? 'ArrowLeft' : 'ArrowRight');
    assert.equal(await name(), top);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    const deep = await name();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('#breadcrumb .crumb').length === 4);
    assert.equal(await page.textContent('#breadcrumb .crumb:last-child'), deep);
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press(' ');
    await page.waitForFunction(() => document.querySelectorAll('#breadcrumb .crumb').length === 3);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => document.querySelectorAll('#breadcrumb .crumb').length === 2);
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => (window as any).__posted.some((m: any) => m.type === 'openSource'));
    await page.keyboard.press('Enter'); // zoom in once more: the breadcrumb and details have links
    await page.waitForFunction(() => document.querySelectorAll('#breadcrumb .crumb').length === 3);

    // The open-source link of the zoomed node, the breadcrumb and Reset zoom.
    const opened = () => page.evaluate(() => (window as any).__posted.filter((m: any) => m.type === 'openSource').length);
    const before = await opened();
    await tabTo(page, 'a.open-source');
    await page.keyboard.press('Enter');
    await page.waitForFunction((n) => (window as any).__posted.filter((m: any) => m.type === 'openSource').length === n + 1, before);
    await tabTo(page, 'button.crumb', true); // backwards: the last crumb first
    await page.keyboard.press('Shift+Tab'); // the one before
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('#breadcrumb .crumb').length === 2);
    await tabTo(page, '#reset', true);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('#breadcrumb .crumb').length === 1);

    // The table: sort by a header, search with a row, open a row's source.
    await tableCurrent(page);
    await tabTo(page, 'th.total');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#table th.sorted')?.getAttribute('data-sort') === 'total');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'tr');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    const rowName = await page.evaluate(() => (document.activeElement as HTMLElement).querySelector('.name')!.textContent);
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLTableRowElement).sectionRowIndex), 2);
    await page.keyboard.press('Enter');
    await page.waitForFunction((n) => (document.getElementById('search') as HTMLInputElement).value === n, rowName);
    const beforeRow = await opened();
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction((n) => (window as any).__posted.filter((m: any) => m.type === 'openSource').length === n + 1, beforeRow);

    // The search box, the thread list, the grouping and Hide debugger.
    await tabTo(page, '#search');
    await page.keyboard.press('Escape'); // clears the search set by the row
    await page.waitForFunction(() => (document.getElementById('search') as HTMLInputElement).value === '');
    await page.keyboard.type('price');
    await page.waitForFunction(() => /of samples/.test(document.getElementById('match')!.textContent ?? ''));
    await page.keyboard.press('Escape');
    await tabTo(page, '#thread');
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction(() => (window as any).__dapprof.thread !== undefined);
    await page.keyboard.press('Home');
    await page.waitForFunction(() => (window as any).__dapprof.thread === undefined);
    await tabTo(page, '#group');
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction(() => (window as any).__dapprof.groupBy === 'line');
    await tabTo(page, '#hide-debugger');
    await page.keyboard.press('Space');
    await page.waitForFunction(() => (window as any).__dapprof.hideDebugger === false);
    assert.deepEqual(h.pageErrors, []);
    await page.close();
  });
}
