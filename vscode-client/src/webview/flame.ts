// Canvas renderer of a call tree as a top-down flame graph (an icicle: callers above callees).
// One canvas, no element per node. Nodes narrower than a fraction of a pixel are skipped along
// with their subtrees, so the cost of a frame is bounded by what is visible.

import type { CallNode, CallTree, KeyInfo } from '../model/profile';
import { mutedRgb, nodeRgb, Palette, rgbCss } from './theme';

export const ROW_HEIGHT = 18;
const MIN_WIDTH = 0.4; // CSS px below which a node and its subtree are not drawn
const TEXT_MIN_WIDTH = 24;

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface DrawStats {
  drawn: number;
  skipped: number;
  ms: number;
}

export class FlameGraph {
  tree: CallTree | undefined;
  info: (key: number) => KeyInfo = () => ({ function: '?', file: '', line: 0, native: false });
  /** Path of keys of the zoomed node; [] is the root. */
  zoomPath: number[] = [];
  /** Key predicate of the search; null when no search is active. */
  matches: ((key: number) => boolean) | null = null;
  hovered: CallNode | null = null;
  palette!: Palette;
  rootLabel = 'all';
  lastStats: DrawStats = { drawn: 0, skipped: 0, ms: 0 };

  private readonly ctx: CanvasRenderingContext2D;
  // Hit-test tables of the last draw, per row: x, width and node, in drawing (x) order.
  private rowsX: number[][] = [];
  private rowsW: number[][] = [];
  private rowsNode: CallNode[][] = [];
  private width = 0;
  private colorCache = new Map<number, string>();
  private colorCacheKind = '';
  private charWidth = 7;
  compare: (a: CallNode, b: CallNode) => number = (a, b) => a.key - b.key;

  constructor(readonly canvas: HTMLCanvasElement) {
    this.ctx = canvas.getContext('2d', { alpha: false })!;
  }

  /** Called when the tree or the key -> info mapping changed (another thread or grouping). */
  setTree(tree: CallTree | undefined, info: (key: number) => KeyInfo): void {
    this.tree = tree;
    this.info = info;
    this.colorCache.clear();
    // Alphabetical order by function name keeps the layout stable while data streams in.
    this.compare = (a, b) => {
      const fa = info(a.key).function, fb = info(b.key).function;
      return fa < fb ? -1 : fa > fb ? 1 : a.key - b.key;
    };
  }

  /** The zoomed node: the deepest node of zoomPath present in the tree. */
  zoomNode(): CallNode | undefined {
    if (!this.tree) return undefined;
    let node = this.tree.root;
    for (const k of this.zoomPath) {
      const c = node.child(k);
      if (!c) break;
      node = c;
    }
    return node;
  }

  /** Height in CSS px needed to draw the current tree. */
  contentHeight(): number {
    return ((this.tree?.maxDepth ?? 0) + 1) * ROW_HEIGHT + 4;
  }

  nodeColor(node: CallNode): string {
    if (this.colorCacheKind !== this.palette.kind) {
      this.colorCache.clear();
      this.colorCacheKind = this.palette.kind;
    }
    let c = this.colorCache.get(node.key);
    if (c === undefined) {
      const info = this.info(node.key);
      c = rgbCss(nodeRgb(info.function, info.native, this.palette.kind));
      this.colorCache.set(node.key, c);
    }
    return c;
  }

  /** The fill colour a node is drawn with now (search applied). */
  fillOf(node: CallNode): string {
    if (node.parent === null) return rgbCss(mutedRgb(this.palette.kind));
    if (this.matches) return this.matches(node.key) ? this.palette.match : rgbCss(mutedRgb(this.palette.kind));
    return this.nodeColor(node);
  }

  draw(cssWidth: number, cssHeight: number): DrawStats {
    const t0 = performance.now();
    const dpr = window.devicePixelRatio || 1;
    const pw = Math.max(1, Math.round(cssWidth * dpr)), ph = Math.max(1, Math.round(cssHeight * dpr));
    if (this.canvas.width !== pw || this.canvas.height !== ph) {
      this.canvas.width = pw;
      this.canvas.height = ph;
      this.canvas.style.width = `${cssWidth}px`;
      this.canvas.style.height = `${cssHeight}px`;
    }
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = this.palette.background;
    ctx.fillRect(0, 0, cssWidth, cssHeight);
    ctx.font = this.palette.font;
    ctx.textBaseline = 'middle';
    this.charWidth = ctx.measureText('abcdefghijklmnopqrstuvwxyz').width / 26 || 7;
    this.width = cssWidth;
    this.rowsX = [];
    this.rowsW = [];
    this.rowsNode = [];
    let drawn = 0, skipped = 0;
    const zoom = this.zoomNode();
    if (!zoom || zoom.total <= 0) {
      this.lastStats = { drawn, skipped, ms: performance.now() - t0 };
      return this.lastStats;
    }
    // Ancestors of the zoomed node span the whole width, dimmed.
    const chain: CallNode[] = [];
    for (let n: CallNode | null = zoom; n; n = n.parent) chain.push(n);
    chain.reverse();
    for (const n of chain) {
      this.drawNode(n, 0, cssWidth, n !== zoom);
      drawn++;
    }
    // Descendants, proportional to their totals.
    const scale = cssWidth / zoom.total;
    const stackN: CallNode[] = [zoom];
    const stackX: number[] = [0];
    while (stackN.length) {
      const node = stackN.pop()!;
      let x = stackX.pop()!;
      const kids = node.orderedChildren(this.compare);
      for (let i = 0; i < kids.length; i++) {
        const c = kids[i];
        const w = c.total * scale;
        if (w >= MIN_WIDTH) {
          this.drawNode(c, x, w, false);
          drawn++;
          if (c.children !== null) {
            stackN.push(c);
            stackX.push(x);
          }
        } else skipped++;
        x += w;
      }
    }
    this.lastStats = { drawn, skipped, ms: performance.now() - t0 };
    return this.lastStats;
  }

  private drawNode(node: CallNode, x: number, w: number, dimmed: boolean): void {
    const ctx = this.ctx;
    const d = node.depth;
    const y = d * ROW_HEIGHT;
    const gap = w > 3 ? 1 : 0;
    ctx.globalAlpha = dimmed ? 0.55 : 1;
    ctx.fillStyle = this.fillOf(node);
    ctx.fillRect(x, y, Math.max(w - gap, 0.5), ROW_HEIGHT - 1);
    if (node === this.hovered) {
      ctx.globalAlpha = 1;
      ctx.strokeStyle = this.palette.foreground;
      ctx.lineWidth = 1.5;
      ctx.strokeRect(x + 0.75, y + 0.75, Math.max(w - gap - 1.5, 0.5), ROW_HEIGHT - 2.5);
    }
    if (w >= TEXT_MIN_WIDTH) {
      const label = node.parent === null ? this.rootLabel : this.info(node.key).function;
      const max = Math.floor((w - 6) / this.charWidth);
      if (max >= 2) {
        ctx.globalAlpha = dimmed ? 0.7 : 1;
        ctx.fillStyle = this.matches && node.parent !== null && this.matches(node.key) ? '#ffffff' : this.palette.text;
        ctx.fillText(label.length > max ? label.slice(0, max - 1) + '…' : label, x + 3, y + ROW_HEIGHT / 2);
      }
    }
    ctx.globalAlpha = 1;
    let row = this.rowsX[d];
    if (!row) {
      row = this.rowsX[d] = [];
      this.rowsW[d] = [];
      this.rowsNode[d] = [];
    }
    row.push(x);
    this.rowsW[d].push(w);
    this.rowsNode[d].push(node);
  }

  /** The node drawn at a point (CSS px of the canvas) in the last draw. */
  hit(px: number, py: number): CallNode | undefined {
    const d = Math.floor(py / ROW_HEIGHT);
    const xs = this.rowsX[d];
    if (!xs || py < 0) return undefined;
    // Rows are filled in depth-first order, not sorted by x; one row holds few enough nodes.
    const ws = this.rowsW[d], ns = this.rowsNode[d];
    for (let i = 0; i < xs.length; i++) if (px >= xs[i] && px < xs[i] + ws[i]) return ns[i];
    return undefined;
  }

  /** Where a node is drawn (CSS px), computed from the layout; undefined when not visible. */
  rectOf(node: CallNode): Rect | undefined {
    const zoom = this.zoomNode();
    if (!zoom || zoom.total <= 0) return undefined;
    const y = node.depth * ROW_HEIGHT;
    // Ancestors of the zoom (and the zoom itself) span the full width.
    for (let n: CallNode | null = zoom; n; n = n.parent) if (n === node) return { x: 0, y, w: this.width, h: ROW_HEIGHT };
    const path: CallNode[] = [];
    let n: CallNode | null = node;
    while (n && n !== zoom) {
      path.push(n);
      n = n.parent;
    }
    if (n !== zoom) return undefined; // not below the zoomed node
    const scale = this.width / zoom.total;
    let x = 0;
    for (let i = path.length - 1; i >= 0; i--) {
      const c = path[i];
      for (const s of c.parent!.orderedChildren(this.compare)) {
        if (s === c) break;
        x += s.total * scale;
      }
    }
    const w = node.total * scale;
    return w >= MIN_WIDTH ? { x, y, w, h: ROW_HEIGHT } : undefined;
  }
}
