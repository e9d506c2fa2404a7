// The tooltip of the node under the mouse: function, location, samples and shares; for an asyncio
// task's frame, that it is one, its state, and the task above it (the one that awaits it).

import { CallNode, KeyInfo, locationLabel } from '../model/profile';
import { el, nf, pct } from './dom';
import type { FlameGraph } from './flame';

export class Tooltip {
  readonly element = el('div', { id: 'tooltip', className: 'tooltip', hidden: true });

  constructor(
    private readonly graph: FlameGraph,
    private readonly infoOf: (node: CallNode) => KeyInfo,
    /** The change against the baseline, when one is set (diff.ts). */
    private readonly changeOf: (node: CallNode) => string | undefined = () => undefined,
  ) {
    this.element.setAttribute('role', 'tooltip');
  }

  hide(): void {
    this.element.hidden = true;
  }

  /** The name of the nearest task frame above a node (towards the root), if any. */
  private parentTask(node: CallNode): string | undefined {
    for (let p = node.parent; p !== null && p.parent !== null; p = p.parent) {
      const info = this.infoOf(p);
      if (info.task !== undefined) return info.function;
    }
    return undefined;
  }

  /** Shows `node` near the canvas point (x, y). */
  show(node: CallNode, x: number, y: number): void {
    const total = this.graph.tree!.root.total;
    const parentTotal = node.parent ? node.parent.total : node.total;
    const tip = this.element;
    if (node.parent === null) {
      tip.replaceChildren(el('div', { className: 'fn', textContent: this.graph.rootLabel }), el('div', { textContent: `${nf.format(total)} samples` }));
    } else {
      const info = this.infoOf(node);
      tip.replaceChildren(
        el('div', { className: 'fn', textContent: info.function }),
        el('div', { className: 'loc', textContent: locationLabel(info) }),
        el('div', { className: 'samples', textContent: `${nf.format(node.total)} samples · ${pct(node.total, total)} of total · ${pct(node.total, parentTotal)} of parent` }),
        el('div', { className: 'self', textContent: `own: ${nf.format(node.self)} samples (${pct(node.self, total)})` }),
      );
      if (info.task !== undefined) tip.append(el('div', { className: 'parent-task', textContent: `parent task: ${this.parentTask(node) ?? 'none'}` }));
      const change = this.changeOf(node);
      if (change !== undefined) tip.append(el('div', { className: 'change', textContent: change }));
    }
    tip.hidden = false;
    // The canvas scrolls within the graph: its origin already holds the scroll.
    const o = this.graph.origin();
    const cx = o.left + x, cy = o.top + y;
    const tw = tip.offsetWidth, th = tip.offsetHeight;
    let left = cx + 14, top = cy + 16;
    if (left + tw > window.innerWidth - 4) left = Math.max(4, cx - tw - 10);
    if (top + th > window.innerHeight - 4) top = Math.max(4, cy - th - 10);
    tip.style.left = `${left}px`;
    tip.style.top = `${top}px`;
  }
}
