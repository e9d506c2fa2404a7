// Reading and driving the flame graph page in the browser tests: feeding it messages, waiting
// for its frames, reading its tree (by name paths, against the naive reference aggregation), the
// layout of its nodes and the pixels of its canvas.
import type { Page } from 'playwright-core';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { referenceAggregate, RefNode, RefRange, RefView } from './reference';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** Reference tree keyed by paths of function names (names are unique in the synthetic stream). */
export function byNames(bodies: ProfilingDataBody[], groupBy: 'function' | 'line', thread = 'all', view: boolean | RefView = false, range?: RefRange): Map<string, RefNode> {
  const ref = referenceAggregate(bodies, groupBy, { ...(typeof view === 'boolean' ? { hideDebugger: view } : view), range }).trees.get(thread)!;
  const out = new Map<string, RefNode>();
  for (const [path, v] of ref) {
    const names = path === '' ? '' : path.split(' > ').map((k) => k.split('|')[0]).join(' > ');
    const prev = out.get(names);
    out.set(names, prev ? { total: prev.total + v.total, self: prev.self + v.self } : { ...v });
  }
  return out;
}

/** The page's current tree as name path -> [total, self], summed where a name path repeats (grouped by line, or the same name in several files). */
export async function modelByNames(page: Page): Promise<Map<string, [number, number]>> {
  const model: Array<[string, number, number]> = await page.evaluate(() => {
    const app = (window as any).__dapprof;
    const out: Array<[string, number, number]> = [];
    const walk = (n: any, p: string) => {
      out.push([p, n.total, n.self]);
      for (const c of n.children?.values() ?? []) {
        const name = app.model.keyInfo(app.groupBy, c.key).function;
        walk(c, p === '' ? name : `${p} > ${name}`);
      }
    };
    walk(app.graph.tree.root, '');
    return out;
  });
  const got = new Map<string, [number, number]>();
  for (const [p, t, s] of model) {
    const g = got.get(p) ?? [0, 0];
    got.set(p, [g[0] + t, g[1] + s]);
  }
  return got;
}

export async function frames(page: Page, n = 2): Promise<void> {
  await page.evaluate(
    (count) =>
      new Promise<void>((resolve) => {
        let left = count;
        const tick = () => (--left <= 0 ? resolve() : requestAnimationFrame(tick));
        requestAnimationFrame(tick);
      }),
    n,
  );
}

export async function post(page: Page, messages: unknown[]): Promise<void> {
  await page.evaluate((ms) => {
    for (const m of ms) window.postMessage(m, '*');
  }, messages);
}

export async function feed(page: Page, bodies: ProfilingDataBody[]): Promise<void> {
  const before = await page.evaluate(() => (window as any).__dapprof.model.totals.batches as number);
  await post(
    page,
    bodies.map((body) => ({ type: 'data', body })),
  );
  await page.waitForFunction((n) => (window as any).__dapprof.model.totals.batches === n, before + bodies.length);
  await frames(page);
}

export interface NodeBox {
  x: number;
  y: number;
  w: number;
  h: number;
  total: number;
  self: number;
  /** page coordinates of the canvas origin */
  cx: number;
  cy: number;
}

/** Where the node at a path of function names is drawn, from the page's layout. */
export async function nodeBox(page: Page, names: string[]): Promise<NodeBox | null> {
  return page.evaluate((path) => {
    const app = (window as any).__dapprof;
    let n = app.graph.tree.root;
    for (const name of path) {
      n = [...(n.children?.values() ?? [])].find((c: any) => app.model.keyInfo(app.groupBy, c.key).function === name);
      if (!n) return null;
    }
    const r = app.graph.rectOf(n);
    if (!r) return null;
    const c = app.graph.canvas.getBoundingClientRect();
    return { ...r, total: n.total, self: n.self, cx: c.left, cy: c.top };
  }, names);
}

/** The colour drawn on the canvas at a CSS pixel of it. */
export async function pixel(page: Page, x: number, y: number): Promise<[number, number, number]> {
  return page.evaluate(
    ([px, py]) => {
      const canvas = (window as any).__dapprof.graph.canvas as HTMLCanvasElement;
      const dpr = canvas.width / canvas.getBoundingClientRect().width;
      const d = canvas.getContext('2d')!.getImageData(Math.floor(px * dpr), Math.floor(py * dpr), 1, 1).data;
      return [d[0], d[1], d[2]] as [number, number, number];
    },
    [x, y],
  );
}

export function near(actual: number[], expected: number[], tol = 2): boolean {
  return actual.every((v, i) => Math.abs(v - expected[i]) <= tol);
}

export async function canvasWidth(page: Page): Promise<number> {
  return page.evaluate(() => (window as any).__dapprof.graph.canvas.getBoundingClientRect().width as number);
}

/** Waits until the table shows the model's latest data (it is refreshed at most 4 times a second while live). */
export async function tableCurrent(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const app = (window as any).__dapprof;
    return app.tableKey.startsWith(`${app.model.version}:`);
  });
}

export async function text(page: Page, selector: string): Promise<string> {
  return (await page.textContent(selector)) ?? '';
}
