// The page's side of line heat, in real headless Chromium: the editor's "reveal" (a CodeLens or a
// line's link) zooms into and focuses the function's (or line's) node with the most samples, in
// either grouping; the thread filter is told to the extension.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { harnessForFile, screenshotDir } from '../support/browser';
import { feed, frames, post } from '../support/page';
import { readStream } from '../support/reference';

/* eslint-disable @typescript-eslint/no-explicit-any */
const h = harnessForFile();
const LIVE = readStream('live-stream.jsonl');
const FILE = Object.values(LIVE[0].newFrames).find((f) => f.file.endsWith('live-app.py'))!.file;

/** The zoomed and the focused node: function, line, path of function names, and the graph's focus. */
async function zoomed(page: any) {
  return page.evaluate(() => {
    const app = (window as any).__dapprof;
    const z = app.graph.zoomNode();
    const names = (n: any) => {
      const out: string[] = [];
      for (let m = n; m && m.parent; m = m.parent) out.unshift(app.infoOf(m).function);
      return out;
    };
    return { fn: app.infoOf(z).function, line: app.infoOf(z).line, path: names(z), focused: app.graph.focused === z, active: document.activeElement?.id };
  });
}

test('a reveal zooms into the function with the most samples and focuses it; by line, the line; the thread filter is posted', async () => {
  const page = await h.open();
  await post(page, [{ type: 'run', run: { session: 'live' } }]);
  await feed(page, LIVE);
  await frames(page);
  await post(page, [{ type: 'reveal', file: FILE, function: 'checksum' }]);
  await frames(page);
  let z = await zoomed(page);
  assert.equal(z.fn, 'checksum');
  assert.deepEqual(z.path.slice(-3), ['main', 'run_batches', 'checksum']);
  assert.ok(z.focused && z.active === 'graph', 'the node has the focus');
  assert.match((await page.textContent('#details')) ?? '', /checksum/);
  await page.screenshot({ path: join(screenshotDir, 'reveal-function.png') });

  // Grouped by line, a line of a function: that line's node.
  await page.selectOption('#group', 'line');
  await page.waitForFunction(() => (window as any).__dapprof.groupBy === 'line');
  const line = await page.evaluate((file: string) => {
    const m = (window as any).__dapprof.model;
    const rows = m.table('line', undefined, 'total', Infinity, true).filter((r: any) => r.info.file === file && r.info.function === 'digest');
    return rows[rows.length - 1].info.line;
  }, FILE);
  await post(page, [{ type: 'reveal', file: FILE, function: 'digest', line }]);
  await frames(page);
  z = await zoomed(page);
  assert.deepEqual([z.fn, z.line], ['digest', line]);

  // A function not in the view leaves the zoom as it is.
  await post(page, [{ type: 'reveal', file: FILE, function: 'no_such_function' }]);
  await frames(page);
  assert.deepEqual([(await zoomed(page)).fn, (await zoomed(page)).line], ['digest', line]);

  // The thread filter is told to the extension (for the editor's figures).
  const hasher = await page.evaluate(() => (window as any).__dapprof.model.threadList().find((t: any) => t.info?.name === 'hasher').id);
  await page.selectOption('#thread', String(hasher));
  const posted = await page.evaluate(() => (window as any).__posted);
  assert.deepEqual(posted.at(-1), { type: 'thread', thread: hasher });
  assert.deepEqual(h.pageErrors, []);
  await page.close();
});
