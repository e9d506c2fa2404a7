// Keyboard access to the flame graph: the graph is one tab stop; inside it the arrow keys move a
// focus ring from node to node (Up: the caller, Down: the widest callee, Left/Right: the next node
// drawn in the row), Enter or Space zooms into the focused node, Ctrl/Cmd+Enter opens its source,
// Home goes back to the zoomed node, Escape (input.ts) zooms out. The focused node gets the
// tooltip a mouse would show, and is announced to screen readers.

import type { CallNode } from '../model/profile';
import { nf, pct } from './dom';
import { ROW_HEIGHT } from './flame';
import type { InputTarget } from './input';

export class GraphKeys {
  constructor(
    private readonly t: InputTarget,
    private readonly announceEl: HTMLElement,
  ) {
    const { graph, graphEl } = t;
    graphEl.addEventListener('focus', () => {
      graph.focusVisible = true;
      this.focus(graph.focused ?? graph.zoomNode() ?? null);
    });
    graphEl.addEventListener('blur', () => {
      graph.focusVisible = false;
      t.tooltip.hide();
      t.changed();
    });
    graphEl.addEventListener('keydown', (e) => {
      if (e.target !== graphEl) return;
      const next = this.target(e);
      if (next === undefined) return;
      e.preventDefault();
      if (next !== null) this.focus(next);
    });
  }

  /** The node a key moves to; null when the key acted (zoom, open); undefined when not ours. */
  private target(e: KeyboardEvent): CallNode | null | undefined {
    const g = this.t.graph;
    const cur = g.focused ?? g.zoomNode();
    if (!cur) return undefined;
    switch (e.key) {
      case 'ArrowUp':
        return cur.parent ?? cur;
      case 'ArrowDown': {
        let best: CallNode | undefined;
        for (const c of cur.children?.values() ?? []) if (!best || c.total > best.total) best = c;
        return best && g.rectOf(best) ? best : cur;
      }
      case 'ArrowLeft':
      case 'ArrowRight':
        return this.sideways(cur, e.key === 'ArrowRight' ? 1 : -1);
      case 'Home':
        return g.zoomNode() ?? cur;
      case 'Enter':
      case ' ':
        if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') {
          if (cur.parent !== null) this.t.openSource(this.t.infoOf(cur));
        } else this.t.zoomTo(cur);
        return null;
      default:
        return undefined;
    }
  }

  /** The nearest node drawn to the left or right of `cur` in its row, or `cur`. */
  private sideways(cur: CallNode, dir: 1 | -1): CallNode {
    const r = this.t.graph.rectOf(cur);
    if (!r) return cur;
    let best: { node: CallNode; x: number } | undefined;
    for (const e of this.t.graph.row(cur.depth)) {
      if (e.node === cur || (dir > 0 ? e.x <= r.x : e.x >= r.x)) continue;
      if (!best || (dir > 0 ? e.x < best.x : e.x > best.x)) best = e;
    }
    return best?.node ?? cur;
  }

  private focus(node: CallNode | null): void {
    const { graph, graphEl, tooltip } = this.t;
    graph.focused = node;
    this.t.changed();
    if (!node || !graph.tree) return;
    const r = graph.rectOf(node);
    if (r) {
      // Keep the focused row in view, and show its tooltip as a mouse over it would.
      if (r.y < graphEl.scrollTop) graphEl.scrollTop = r.y;
      else if (r.y + ROW_HEIGHT > graphEl.scrollTop + graphEl.clientHeight) graphEl.scrollTop = r.y + ROW_HEIGHT - graphEl.clientHeight;
      tooltip.show(node, r.x + Math.min(r.w / 2, 40), r.y + ROW_HEIGHT / 2);
    }
    const name = node.parent === null ? graph.rootLabel : this.t.infoOf(node).function;
    this.announceEl.textContent = `${name}: ${nf.format(node.total)} samples, ${pct(node.total, graph.tree.root.total)} of all`;
  }
}
