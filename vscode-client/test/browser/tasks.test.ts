// asyncio tasks in the flame graph page, in real headless Chromium: the "By task" view (roots are
// tasks), the task colours, the tooltip of a task node (state, parent task), and "Waiting tasks"
// (enabled only for a run sampled with async "all"), live and on a time range, against the naive
// reference (test/support/reference.ts). The toggles are found by their accessible names, as the
// end-to-end test finds them. A screenshot of the By task view goes to build/screenshots/.
//
// The stream is written here in the shape docs/PROFILING.md gives for async "all" (a daemon with
// async sampling to record one from is not part of this branch): a server's loop thread running
// one handler per tick under main while the other handlers wait in asyncio.sleep, a ticker task,
// and a thread running no task.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import type { Frame, ProfilingDataBody } from '../../src/model/protocol';
import { harnessForFile, screenshotDir } from '../support/browser';
import { byNames, feed, frames, modelByNames, nodeBox, pixel, post, tableCurrent, text } from '../support/page';
import type { RefView } from '../support/reference';

/* eslint-disable @typescript-eslint/no-explicit-any */
const h = harnessForFile();

const SERVER = '/srv/app/server.py';
const FRAMES: Record<string, Frame> = {
  '1': { file: '', line: 0, function: '(event loop)' },
  '2': { file: '', line: 0, function: 'main', task: 'waiting' },
  '3': { file: SERVER, line: 40, function: 'main' },
  '4': { file: '', line: 0, function: 'handler-1', task: 'running' },
  '5': { file: '', line: 0, function: 'handler-2', task: 'running' },
  '6': { file: '', line: 0, function: 'handler-3', task: 'running' },
  '7': { file: '', line: 0, function: 'handler-1', task: 'waiting' },
  '8': { file: '', line: 0, function: 'handler-2', task: 'waiting' },
  '9': { file: '', line: 0, function: 'handler-3', task: 'waiting' },
  '10': { file: SERVER, line: 12, function: 'handle' },
  '11': { file: SERVER, line: 5, function: 'compute' },
  '12': { file: SERVER, line: 14, function: 'handle' },
  '13': { file: '/usr/lib/python3.12/asyncio/tasks.py', line: 649, function: 'sleep' },
  '14': { file: '', line: 0, function: 'ticker', task: 'waiting' },
  '15': { file: SERVER, line: 30, function: 'tick' },
  '16': { file: '', line: 0, function: 'ticker', task: 'cancelling' },
  '17': { file: '/usr/lib/python3.12/threading.py', line: 1010, function: 'Thread._bootstrap' },
  '18': { file: SERVER, line: 50, function: 'write_log' },
  '19': { file: '', line: 0, function: 'write', native: true, module: '/usr/lib/x86_64-linux-gnu/libc.so.6' },
};
const T0 = 1_764_435_600_000;

/** Batch `b` of the run: 10 ticks; each tick one handler runs (handler 1 twice as often), the others wait. */
function batch(b: number): ProfilingDataBody {
  const samples: number[][] = [];
  const threadIds: number[] = [];
  for (let t = 0; t < 10; t++) {
    const tick = b * 10 + t;
    const running = [0, 0, 1, 2][tick % 4];
    samples.push([1, 2, 3, 4 + running, 10, 11]);
    for (let k = 0; k < 3; k++) if (k !== running) samples.push([1, 2, 3, 7 + k, 12, 13]);
    samples.push([1, 2, 3]); // main itself waits in gather
    samples.push(tick % 25 === 24 ? [1, 16, 15, 13] : [1, 14, 15, 13]);
    threadIds.push(1, 1, 1, 1, 1);
    samples.push(tick % 3 === 0 ? [17, 18] : [17, 18, 19]);
    threadIds.push(2);
  }
  const startTime = T0 + b * 100;
  return { newFrames: b === 0 ? FRAMES : {}, samples, sampleCount: samples.length, duration: 100, threadIds, startTime, endTime: startTime + 99, threads: b === 0 ? { '1': { name: 'MainThread', osThreadId: 1 }, '2': { name: 'log', osThreadId: 2 } } : {} };
}
const BODIES = Array.from({ length: 12 }, (_, b) => batch(b));
const ALL_RUN = { type: 'run', run: { session: 'server.py', pid: 4711, rate: 100, async: 'all' } };

async function compare(page: Page, bodies: ProfilingDataBody[], view: RefView, what: string, range?: Parameters<typeof byNames>[4]): Promise<Map<string, [number, number]>> {
  await frames(page);
  const got = await modelByNames(page);
  const ref = byNames(bodies, 'function', 'all', view, range);
  assert.deepEqual([...got].sort(), [...ref].map(([k, v]) => [k, [v.total, v.self]]).sort(), what);
  return got;
}

function roots(tree: Map<string, [number, number]>): string[] {
  return [...tree.keys()].filter((k) => k !== '' && !k.includes(' > ')).sort();
}

test('By task: the roots are tasks, drawn in the task colours; the tooltip says task, state and parent task; a screenshot', async () => {
  const page = await h.open();
  await post(page, [ALL_RUN]);
  await feed(page, BODIES);
  const byTask = page.getByRole('checkbox', { name: 'By task' });
  const waiting = page.getByRole('checkbox', { name: 'Waiting tasks' });
  assert.equal(await byTask.isChecked(), false, 'off by default');
  assert.equal(await waiting.isEnabled(), true, 'the run samples waiting tasks');
  assert.equal(await waiting.isChecked(), true, 'they are shown by default');
  const plain = await compare(page, BODIES, { hideDebugger: true }, 'as sampled');
  assert.deepEqual(roots(plain), ['(event loop)', 'Thread._bootstrap']);

  await byTask.click();
  await page.waitForFunction(() => (window as any).__dapprof.byTask === true);
  const tasks = await compare(page, BODIES, { hideDebugger: true, byTask: true }, 'by task');
  assert.deepEqual(roots(tasks), ['Thread._bootstrap', 'main', 'ticker'], 'the outermost tasks, and the thread running none');
  assert.equal(tasks.get('')![0], BODIES.reduce((a, b) => a + b.sampleCount, 0), 'every sample is there');
  assert.deepEqual(await page.evaluate(() => (window as any).__state), { groupBy: 'function', tableSort: 'self', hideDebugger: true, byTask: true, waitingTasks: true }, 'the choice persists');

  // Colours: a running task in the theme's green, a waiting one faded into the background.
  const green: [number, number, number] = [56, 138, 52];
  const faded = green.map((v) => Math.round((v + 255) / 2));
  const main = (await nodeBox(page, ['main']))!;
  assert.deepEqual(await pixel(page, main.x + 2, main.y + 1), faded, 'main waits');
  // handler-1's running and waiting frames are two nodes; the running one is green.
  const runningNode = await page.evaluate(() => {
    const app = (window as any).__dapprof;
    let n = app.graph.tree.root;
    for (const name of ['main', 'main']) n = [...n.children.values()].find((c: any) => app.model.keyInfo('function', c.key).function === name);
    const c = [...n.children.values()].find((c: any) => app.model.keyInfo('function', c.key).function === 'handler-1' && app.model.keyInfo('function', c.key).task === 'running');
    return { ...app.graph.rectOf(c), cx: app.graph.canvas.getBoundingClientRect().left, cy: app.graph.canvas.getBoundingClientRect().top };
  });
  assert.deepEqual(await pixel(page, runningNode.x + 2, runningNode.y + 1), green, 'handler-1 runs');

  // The tooltip of a task node, with the real mouse.
  const tipOf = async (b: { x: number; y: number; w: number; h: number; cx: number; cy: number }) => {
    await page.mouse.move(b.cx + b.x + Math.min(b.w / 2, 20), b.cy + b.y + b.h / 2);
    await page.waitForSelector('#tooltip:not([hidden])');
    return text(page, '#tooltip');
  };
  let tip = await tipOf(main);
  assert.match(tip, /^main/);
  assert.ok(tip.includes('asyncio task · waiting'), tip);
  assert.ok(tip.includes('parent task: none'), tip);
  tip = await tipOf(runningNode);
  assert.match(tip, /^handler-1/);
  assert.ok(tip.includes('asyncio task · running'), tip);
  assert.ok(tip.includes('parent task: main'), tip);
  await page.screenshot({ path: join(screenshotDir, 'flamegraph-by-task.png') });
  // A coroutine's frame is no task.
  tip = await tipOf((await nodeBox(page, ['main', 'main']))!);
  assert.ok(tip.includes(`${SERVER}:40`) && !tip.includes('asyncio task') && !tip.includes('parent task'), tip);

  // The table names tasks as such.
  await tableCurrent(page);
  const locs = await page.$$eval('#table tbody tr', (trs) => trs.map((tr) => `${tr.querySelector('.name')!.textContent}${tr.querySelector('.loc')!.textContent}`));
  assert.ok(locs.includes('main asyncio task · waiting'), locs.join('\n'));
  assert.ok(locs.includes('handler-1 asyncio task · running') && locs.includes('handler-1 asyncio task · waiting'), locs.join('\n'));
  assert.deepEqual(h.pageErrors, []);
  await page.close();
});

test('Waiting tasks off leaves out the samples of waiting tasks, live, per batch and on a range; on, they are back', async () => {
  const page = await h.open();
  await post(page, [ALL_RUN]);
  await feed(page, BODIES.slice(0, 6));
  await page.getByRole('checkbox', { name: 'By task' }).check();
  const waiting = page.getByRole('checkbox', { name: 'Waiting tasks' });
  await waiting.uncheck();
  await page.waitForFunction(() => (window as any).__dapprof.waitingTasks === false);
  const view: RefView = { hideDebugger: true, byTask: true, waiting: 'exclude' };
  let tree = await compare(page, BODIES.slice(0, 6), view, 'running only');
  // Per tick: one running handler and the log thread's sample.
  assert.equal(tree.get('')![0], 6 * 10 * 2);
  assert.deepEqual(roots(tree), ['Thread._bootstrap', 'main']);
  assert.equal(tree.has('main > main > handler-2 > handle > sleep'), false, 'no wait is left');
  // The table's shares are of what the view holds.
  await tableCurrent(page);
  const top = await page.$eval('#table tbody tr', (tr) => [tr.querySelector('.name')!.textContent, (tr as HTMLTableRowElement).cells[0].textContent]);
  assert.deepEqual(top, ['compute', '50.0%']);

  // Live: every batch lands in the filtered view.
  for (let b = 6; b < 9; b++) {
    await feed(page, [BODIES[b]]);
    tree = await compare(page, BODIES.slice(0, b + 1), view, `batch ${b}`);
  }
  // A time range of the timeline.
  await page.evaluate((t0) => (window as any).__dapprof.setRange({ start: t0 + 250, end: t0 + 650 }), T0);
  const r = await page.evaluate(() => {
    const app = (window as any).__dapprof;
    const tl = app.model.timeline;
    const [first, end] = tl.bucketsIn(app.range);
    return { origin: tl.origin, width: tl.width, first, end };
  });
  await compare(page, BODIES.slice(0, 9), view, 'range, running only', r);
  await feed(page, BODIES.slice(9));
  await compare(page, BODIES, view, 'range after more batches', r);
  await waiting.check();
  await compare(page, BODIES, { hideDebugger: true, byTask: true }, 'range, waiting tasks back', r);
  await page.evaluate(() => (window as any).__dapprof.setRange(null));
  tree = await compare(page, BODIES, { hideDebugger: true, byTask: true }, 'whole run');
  assert.ok(tree.has('main > main > handler-2 > handle > sleep'));
  assert.deepEqual(h.pageErrors, []);
  await page.close();
});

test('a run not sampled with async "all" has "Waiting tasks" disabled, saying which setting enables it', async () => {
  const page = await h.open();
  for (const run of [
    { session: 'server.py', rate: 100, async: 'running' },
    { session: 'server.py', rate: 100 },
  ]) {
    await post(page, [{ type: 'run', run }]);
    await feed(page, BODIES.slice(0, 2));
    const waiting = page.getByRole('checkbox', { name: 'Waiting tasks' });
    assert.equal(await waiting.isDisabled(), true, JSON.stringify(run));
    const title = await page.$eval('#waiting-tasks', (e) => (e.closest('label') as HTMLElement).title);
    assert.match(title, /dapprof\.profiling\.async/);
    assert.match(title, /"all"/);
    // Nothing is left out: whatever its stacks hold, the graph shows every sample.
    await compare(page, BODIES.slice(0, 2), { hideDebugger: true }, 'everything');
  }
  // The next run with async "all" enables it.
  await post(page, [ALL_RUN]);
  await feed(page, BODIES.slice(0, 1));
  assert.equal(await page.getByRole('checkbox', { name: 'Waiting tasks' }).isEnabled(), true);
  assert.doesNotMatch(await page.$eval('#waiting-tasks', (e) => (e.closest('label') as HTMLElement).title), /set it/);
  assert.deepEqual(h.pageErrors, []);
  await page.close();
});
