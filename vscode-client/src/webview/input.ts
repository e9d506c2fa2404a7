// The page's input: mouse over the canvas (hover, zoom, Ctrl+click to open the source), the
// keyboard (Ctrl+F, Escape; the graph's own keys are in keyboard.ts), the extension's messages,
// and the size and theme changes that need a redraw.

import type { CallNode, KeyInfo } from '../model/profile';
import type { FlameGraph } from './flame';
import { GraphKeys } from './keyboard';
import type { ToWebview } from './messages';
import type { Tooltip } from './tooltip';

export interface InputTarget {
  graph: FlameGraph;
  graphEl: HTMLElement;
  searchEl: HTMLInputElement;
  tooltip: Tooltip;
  /** A live region that tells screen readers the node of the keyboard's focus. */
  announceEl: HTMLElement;
  handle(msg: ToWebview): void;
  zoomTo(node: CallNode): void;
  openSource(info: KeyInfo): void;
  infoOf(node: CallNode): KeyInfo;
  /** Something shown changed: redraw on the next frame. */
  changed(): void;
  /** The timeline's range, dropped by Escape once zoomed out. */
  range: unknown;
  setRange(r: null): void;
}

export class Input {
  /** The mouse over the canvas, in canvas coordinates; null when outside. */
  private mouse: { x: number; y: number } | null = null;

  constructor(private readonly t: InputTarget) {
    window.addEventListener('message', (e: MessageEvent) => {
      const msg = e.data as ToWebview;
      if (msg && typeof msg === 'object' && typeof msg.type === 'string') t.handle(msg);
    });
    const graph = t.graph;
    const canvas = graph.canvas;
    new GraphKeys(t, t.announceEl);
    canvas.addEventListener('mousemove', (e) => {
      this.mouse = this.canvasPoint(e);
      this.hoverAt(this.mouse.x, this.mouse.y, true);
    });
    canvas.addEventListener('mouseleave', () => {
      this.mouse = null;
      t.tooltip.hide();
      if (graph.hovered) {
        graph.hovered = null;
        t.changed();
      }
    });
    canvas.addEventListener('click', (e) => {
      const p = this.canvasPoint(e);
      const node = graph.hit(p.x, p.y);
      if (!node) return;
      if ((e.ctrlKey || e.metaKey) && node.parent !== null) t.openSource(t.infoOf(node));
      else t.zoomTo(node);
    });
    window.addEventListener('keydown', (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'f') {
        e.preventDefault();
        t.searchEl.focus();
        t.searchEl.select();
      } else if (e.key === 'Escape' && document.activeElement !== t.searchEl) {
        const zoom = graph.zoomNode();
        if (zoom?.parent) t.zoomTo(zoom.parent);
        else if (t.range !== null) t.setRange(null);
      }
    });
    new ResizeObserver(() => {
      graph.invalidateOrigin();
      t.changed();
    }).observe(t.graphEl);
    t.graphEl.addEventListener('scroll', () => graph.invalidateOrigin(), { passive: true });
    window.addEventListener('resize', () => graph.invalidateOrigin());
    // VS Code changes the theme by rewriting the body class and the root element's variables.
    const themeObserver = new MutationObserver(() => t.changed());
    themeObserver.observe(document.body, { attributes: true, attributeFilter: ['class'] });
    themeObserver.observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
  }

  /** After a redraw: the node under a still mouse may have moved or changed. */
  refreshHover(): void {
    if (this.mouse) this.hoverAt(this.mouse.x, this.mouse.y, false);
  }

  private hoverAt(x: number, y: number, redraw: boolean): void {
    const { graph, graphEl, tooltip } = this.t;
    const node = graph.hit(x, y);
    if (node !== graph.hovered) {
      graph.hovered = node ?? null;
      if (redraw) this.t.changed();
    }
    graphEl.style.cursor = node ? 'pointer' : '';
    if (node) tooltip.show(node, x, y);
    else tooltip.hide();
  }

  private canvasPoint(e: MouseEvent): { x: number; y: number } {
    const r = this.t.graph.origin();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }
}
