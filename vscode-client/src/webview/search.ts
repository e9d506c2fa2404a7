// Search: which keys match the query (cached per model version), and the share of samples whose
// stack holds a match.

import type { CallNode, CallTree, KeyInfo } from '../model/profile';
import { pct } from './dom';
import type { FlameGraph } from './flame';

export class SearchMatcher {
  private keys: Set<number> | null = null;
  private version = -1;

  /** The cached keys no longer hold: the query or the grouping changed. */
  invalidate(): void {
    this.keys = null;
  }

  /** Keys of `infos` whose function or file contains `q` (lower case, non-empty). */
  matches(q: string, infos: readonly KeyInfo[], version: number): Set<number> {
    if (this.keys === null || this.version !== version) {
      const keys = new Set<number>();
      infos.forEach((info, k) => {
        if (info.function.toLowerCase().includes(q) || info.file.toLowerCase().includes(q)) keys.add(k);
      });
      this.keys = keys;
      this.version = version;
    }
    return this.keys;
  }
}

/** Samples whose stack holds a match: the totals of the outermost matching nodes. */
export function matchedSamples(tree: CallTree | undefined, keys: Set<number>): number {
  if (!tree) return 0;
  let matched = 0;
  const stack: CallNode[] = [tree.root];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.parent !== null && keys.has(n.key)) {
      matched += n.total;
      continue;
    }
    if (n.children) for (const c of n.children.values()) stack.push(c);
  }
  return matched;
}

/** Highlights the matches of `query` in the graph and says their share of samples in `matchEl`. */
export function showMatches(query: string, matcher: SearchMatcher, infos: readonly KeyInfo[], version: number, graph: FlameGraph, matchEl: HTMLElement): void {
  const q = query.trim().toLowerCase();
  if (!q) {
    graph.matches = null;
    matchEl.textContent = '';
    return;
  }
  const keys = matcher.matches(q, infos, version);
  graph.matches = (k) => keys.has(k);
  const matched = matchedSamples(graph.tree, keys);
  matchEl.textContent = keys.size === 0 ? 'no match' : `${pct(matched, graph.tree?.root.total ?? 0)} of samples`;
  matchEl.dataset.samples = String(matched);
}
