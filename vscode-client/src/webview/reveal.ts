// Finding the node the editor asks to reveal (a CodeLens or a line's annotation): in the tree
// shown, the node of that function (and, grouped by line, of that line) with the most samples,
// the outermost of equals.

import type { CallNode, CallTree, KeyInfo } from '../model/profile';

export function findReveal(tree: CallTree | undefined, infoOf: (node: CallNode) => KeyInfo, target: { file: string; function: string; line?: number }, byLine: boolean): CallNode | undefined {
  let best: CallNode | undefined;
  for (const n of tree?.nodes ?? []) {
    if (n.parent === null || n.total === 0) continue;
    const info = infoOf(n);
    if (info.native || info.file !== target.file || info.function !== target.function) continue;
    if (byLine && target.line !== undefined && info.line !== target.line) continue;
    if (!best || n.total > best.total || (n.total === best.total && n.depth < best.depth)) best = n;
  }
  return best;
}
