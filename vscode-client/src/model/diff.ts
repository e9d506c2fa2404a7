// A differential profile: the current call tree against a baseline's (another run, aggregated by
// its own ProfileModel), node by node. Keys differ between models, so a node is matched by its
// path of frame (or function) identities from the root; its change is its share of all samples
// now less its share in the baseline. Plain TypeScript: the webview colours and tabulates it.

import type { CallNode, CallTree } from './calltree';
import type { KeyInfo } from './profile';

export interface DiffRow {
  /** Names of the path's nodes, root first (the root itself excluded). */
  names: string[];
  /** Share of all samples (0..1) now, in the baseline, and now less baseline. */
  current: number;
  baseline: number;
  delta: number;
}

export interface ProfileDiff {
  /** Per node of the current tree: its change of share. */
  deltaOf: Map<CallNode, number>;
  /** Every path of either tree, by |delta| then name. */
  rows: DiffRow[];
}

/** What a key stands for across models (the same fields that make a frame or function key). */
export function identity(i: KeyInfo): string {
  return `${i.function}\0${i.file}\0${i.line}\0${i.native ? 'n' : ''}\0${i.module ?? ''}`;
}

type Info = (key: number) => KeyInfo;

function walk(tree: CallTree, info: Info, id: (i: KeyInfo) => string, visit: (node: CallNode, path: string, names: string[]) => void): void {
  const go = (n: CallNode, path: string, names: string[]) => {
    if (n.children === null) return;
    for (const c of n.children.values()) {
      const i = info(c.key);
      const p = `${path}\u0001${id(i)}`, ns = [...names, i.function];
      visit(c, p, ns);
      go(c, p, ns);
    }
  };
  go(tree.root, '', []);
}

/**
 * The change of each path's share between two trees of the same grouping. A function's identity
 * leaves out its line (the first line seen, which differs between runs).
 */
export function diffTrees(current: CallTree | undefined, info: Info, baseline: CallTree | undefined, baseInfo: Info, byFunction: boolean): ProfileDiff {
  const id: (i: KeyInfo) => string = byFunction ? (i) => `${i.function}\0${i.file}\0${i.native ? 'n' : ''}\0${i.native ? i.module ?? '' : ''}` : identity;
  const base = new Map<string, { share: number; names: string[] }>();
  const bTotal = baseline?.root.total ?? 0;
  if (baseline && bTotal > 0) walk(baseline, baseInfo, id, (n, p, names) => base.set(p, { share: n.total / bTotal, names }));
  const deltaOf = new Map<CallNode, number>();
  const rows: DiffRow[] = [];
  const cTotal = current?.root.total ?? 0;
  const seen = new Set<string>();
  if (current && cTotal > 0)
    walk(current, info, id, (n, p, names) => {
      const b = base.get(p)?.share ?? 0, c = n.total / cTotal;
      deltaOf.set(n, c - b);
      seen.add(p);
      rows.push({ names, current: c, baseline: b, delta: c - b });
    });
  for (const [p, b] of base) if (!seen.has(p)) rows.push({ names: b.names, current: 0, baseline: b.share, delta: -b.share });
  const name = (r: DiffRow) => r.names.join(' > ');
  rows.sort((a, b) => Math.abs(b.delta) - Math.abs(a.delta) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0));
  return { deltaOf, rows };
}
