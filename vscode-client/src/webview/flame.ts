// Canvas renderer of a call tree as a top-down flame graph (an icicle: callers above callees).
// One canvas, no element per node. Nodes narrower than a fraction of a pixel are skipped along
// with their subtrees, and so is a node under a pixel wide whose pixel of its row is already
// drawn, so the cost of a frame is bounded by what is visible. The rectangles are written as
// pixels straight into an ImageData during the walk (no fillRect, no queue per colour), with
// colours cached per key; labels are drawn after, only where they fit, and the hit-test tables
// (hit-rows.ts) are reused from frame to frame, so that a frame allocates next to nothing.

import type { CallNode, CallTree, KeyInfo } from '../model/profile';
import { HitRows } from './hit-rows';
import { fillPixels } from './raster';
import { mutedRgb, nodeRgb, packedPixel, Palette, rgbCss } from './theme';

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
  /** When set, the fill of every non-root node (a diff's colours, webview/diff.ts); a search's still win. */
  colourHook: ((node: CallNode) => string) | null = null;
  hovered: CallNode | null = null;
  /** The node of the keyboard's focus (arrow keys), ringed while the graph has the focus. */
  focused: CallNode | null = null;
  focusVisible = false;
  palette!: Palette;
  rootLabel = 'all';
  lastStats: DrawStats = { drawn: 0, skipped: 0, ms: 0 };

  private readonly ctx: CanvasRenderingContext2D;
  /** Where the last draw put each node. */
  private readonly hits = new HitRows();
  private width = 0;
  private colorCache = new Map<number, string>();
  private colorCacheKind = '';
  /** Per key: its colour as a pixel (0: not computed yet); reset with colorCache. */
  private keyPixel = new Uint32Array(256);
  private mutedPixel = 0;
  private matchPixel = 0;
  private dpr = 1;
  private originCache: { left: number; top: number } | null = null;
  private pw = 0;
  private ph = 0;
  /** Labels that fit, by function name and the number of characters shown. */
  private labelCache = new Map<string, string>();
  private charWidth = 7;
  private fontSet = '';
  private tinyMask = new Uint8Array(0);
  private image: ImageData | undefined;
  private pixels: Uint32Array | undefined;
  private maskWidth = 0;
  compare: (a: CallNode, b: CallNode) => number = (a, b) => a.key - b.key;
  /** The walk's stack of nodes and their x, kept between draws. */
  private readonly stackN: CallNode[] = [];
  private readonly stackX: number[] = [];
  private textQueue: Array<CallNode | number> = [];
  private textCount = 0;
  private dimmedQueue: Array<CallNode | number> = [];

  constructor(readonly canvas: HTMLCanvasElement) {
    this.ctx = canvas.getContext('2d', { alpha: false })!;
  }

  /** Called when the tree or the key -> info mapping changed (another thread or grouping). */
  setTree(tree: CallTree | undefined, info: (key: number) => KeyInfo): void {
    this.tree = tree;
    this.info = info;
    this.colorCache.clear();
    this.keyPixel.fill(0);
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
      this.keyPixel.fill(0);
      this.colorCacheKind = this.palette.kind;
    }
    let c = this.colorCache.get(node.key);
    if (c === undefined) {
      const info = this.info(node.key);
      // A task's frame in the task colour (its state from the daemon's frame), others by name.
      if (info.task !== undefined) c = info.task === 'running' ? this.palette.task : this.palette.taskWaiting;
      else c = rgbCss(nodeRgb(info.function, info.native, this.palette.kind));
      this.colorCache.set(node.key, c);
    }
    return c;
  }

  /** The fill colour a node is drawn with now (search applied). */
  fillOf(node: CallNode): string {
    if (node.parent === null) return rgbCss(mutedRgb(this.palette.kind));
    if (this.matches) return this.matches(node.key) ? this.palette.match : rgbCss(mutedRgb(this.palette.kind));
    return this.colourHook ? this.colourHook(node) : this.nodeColor(node);
  }

  draw(cssWidth: number, cssHeight: number): DrawStats {
    const t0 = performance.now();
    const dpr = window.devicePixelRatio || 1;
    const pw = Math.max(1, Math.round(cssWidth * dpr)), ph = Math.max(1, Math.round(cssHeight * dpr));
    const resized = this.canvas.width !== pw || this.canvas.height !== ph;
    if (resized) {
      this.canvas.width = pw;
      this.canvas.height = ph;
      this.canvas.style.width = `${cssWidth}px`;
      this.canvas.style.height = `${cssHeight}px`;
    }
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    // Measuring text is slow: only when the font changed (a resize resets the context's font).
    if (resized || this.fontSet !== this.palette.font) {
      ctx.font = this.palette.font;
      this.fontSet = this.palette.font;
      this.charWidth = ctx.measureText('abcdefghijklmnopqrstuvwxyz').width / 26 || 7;
    }
    ctx.textBaseline = 'middle';
    this.width = cssWidth;
    this.dpr = pw / Math.max(1, cssWidth);
    this.pw = pw;
    this.ph = ph;
    this.maskWidth = Math.ceil(cssWidth) + 2;
    const maskSize = this.maskWidth * ((this.tree?.maxDepth ?? 0) + 2);
    if (this.tinyMask.length < maskSize) this.tinyMask = new Uint8Array(maskSize);
    else this.tinyMask.fill(0, 0, maskSize);
    this.hits.clear();
    this.textCount = 0;
    this.dimmedQueue.length = 0;
    let drawn = 0, skipped = 0;
    const zoom = this.zoomNode();
    if (!zoom || zoom.total <= 0) {
      ctx.fillStyle = this.palette.background;
      ctx.fillRect(0, 0, cssWidth, cssHeight);
      this.lastStats = { drawn, skipped, ms: performance.now() - t0 };
      return this.lastStats;
    }
    if (!this.image || this.image.width !== pw || this.image.height !== ph) {
      this.image = ctx.createImageData(pw, ph);
      this.pixels = new Uint32Array(this.image.data.buffer);
    }
    this.pixels!.fill(packedPixel(this.palette.background));
    this.mutedPixel = packedPixel(rgbCss(mutedRgb(this.palette.kind)));
    this.matchPixel = packedPixel(this.palette.match);
    // Ancestors of the zoomed node span the whole width, dimmed.
    for (let n: CallNode | null = zoom; n; n = n.parent) {
      this.drawNode(n, 0, cssWidth, n !== zoom);
      drawn++;
    }
    // Descendants, proportional to their totals.
    const scale = cssWidth / zoom.total;
    const stackN = this.stackN, stackX = this.stackX;
    stackN.push(zoom);
    stackX.push(0);
    while (stackN.length) {
      const node = stackN.pop()!;
      let x = stackX.pop()!;
      const kids = node.orderedChildren(this.compare);
      for (let i = 0; i < kids.length; i++) {
        const c = kids[i];
        const w = c.total * scale;
        if (w >= MIN_WIDTH && this.drawNode(c, x, w, false)) {
          drawn++;
          if (c.children !== null) {
            stackN.push(c);
            stackX.push(x);
          }
        } else skipped++;
        x += w;
      }
    }
    this.flush();
    this.lastStats = { drawn, skipped, ms: performance.now() - t0 };
    return this.lastStats;
  }

  private flush(): void {
    const ctx = this.ctx;
    const H = ROW_HEIGHT - 1;
    ctx.putImageData(this.image!, 0, 0);
    // Ancestors of the zoomed node: full width, dimmed (translucent, so drawn by the canvas).
    const dq = this.dimmedQueue;
    for (let i = 0; i < dq.length; i += 3) {
      const node = dq[i] as CallNode, x = dq[i + 1] as number, w = dq[i + 2] as number;
      ctx.globalAlpha = 0.55;
      ctx.fillStyle = this.fillOf(node);
      ctx.fillRect(x, node.depth * ROW_HEIGHT, w - 1, H);
      this.label(node, x, w, 0.7);
    }
    const tq = this.textQueue;
    for (let i = 0; i < this.textCount * 3; i += 3) this.label(tq[i] as CallNode, tq[i + 1] as number, tq[i + 2] as number, 1);
    ctx.globalAlpha = 1;
    const foc = this.focusVisible ? this.focused ?? this.zoomNode() ?? null : null;
    const fr = foc ? this.rectOf(foc) : undefined;
    if (fr) {
      ctx.strokeStyle = this.palette.focusBorder;
      ctx.lineWidth = 2;
      ctx.setLineDash([]);
      ctx.strokeRect(fr.x + 1, fr.y + 1, Math.max(fr.w - 2, 1), ROW_HEIGHT - 2);
    }
    const hov = this.hovered;
    if (hov && hov !== foc) {
      const r = this.rectOf(hov);
      if (r) {
        const gap = r.w > 3 ? 1 : 0;
        ctx.strokeStyle = this.palette.foreground;
        ctx.lineWidth = 2;
        ctx.strokeRect(r.x + 1, r.y + 1, Math.max(r.w - gap - 2, 0.5), ROW_HEIGHT - 3);
      }
    }
  }

  /** Draws a node's label if at least two characters fit (cut with an ellipsis). */
  private label(node: CallNode, x: number, w: number, alpha: number): void {
    const max = Math.floor((w - 6) / this.charWidth);
    if (max < 2) return;
    const text = node.parent === null ? this.rootLabel : this.info(node.key).function;
    let shown = text;
    if (text.length > max) {
      const k = `${max}\0${text}`;
      let cut = this.labelCache.get(k);
      if (cut === undefined) {
        if (this.labelCache.size > 4096) this.labelCache.clear();
        this.labelCache.set(k, (cut = text.slice(0, max - 1) + '…'));
      }
      shown = cut;
    }
    const ctx = this.ctx;
    ctx.globalAlpha = alpha;
    ctx.fillStyle = this.textOn(this.fillOf(node));
    ctx.fillText(shown, x + 3, node.depth * ROW_HEIGHT + ROW_HEIGHT / 2);
  }

  /**
   * Draws a node (a dimmed one is queued for the canvas) and records it for hit tests. Returns
   * false when it was not drawn: under a pixel wide where its row's pixel is already drawn, in
   * which case its subtree, narrower still, is skipped too.
   */
  private drawNode(node: CallNode, x: number, w: number, dimmed: boolean): boolean {
    const d = node.depth;
    if (dimmed) this.dimmedQueue.push(node, x, w);
    else {
      // Nodes under 1.5 px are drawn 1 px wide; one of them per pixel of a row is enough.
      if (w < 1.5) {
        const m = d * this.maskWidth + ((x + 0.5) | 0);
        if (this.tinyMask[m] === 1) {
          if (w < 1) return false;
        } else {
          this.tinyMask[m] = 1;
          this.fill(x, d * ROW_HEIGHT, Math.max(w, 0.5), this.pixelOf(node));
        }
      } else this.fill(x, d * ROW_HEIGHT, w - (w > 3 ? 1 : 0), this.pixelOf(node));
      if (w >= TEXT_MIN_WIDTH) {
        const t = this.textCount++ * 3;
        this.textQueue[t] = node;
        this.textQueue[t + 1] = x;
        this.textQueue[t + 2] = w;
      }
    }
    this.hits.add(d, x, w, node);
    return true;
  }

  /** Writes a rectangle of a row (CSS px) into the pixels: far cheaper than a fillRect each. */
  private fill(x: number, y: number, w: number, c: number): void {
    fillPixels(this.pixels!, this.pw, this.ph, this.dpr, x, y, w, ROW_HEIGHT - 1, c);
  }

  /** The pixel a node is drawn with now (search applied): fillOf as a pixel, cached per key. */
  private pixelOf(node: CallNode): number {
    if (node.parent === null) return this.mutedPixel;
    if (this.matches) return this.matches(node.key) ? this.matchPixel : this.mutedPixel;
    if (this.colourHook) return packedPixel(this.colourHook(node));
    const k = node.key;
    if (k >= this.keyPixel.length) {
      const a = new Uint32Array(Math.max(k + 1, this.keyPixel.length * 2));
      a.set(this.keyPixel);
      this.keyPixel = a;
    }
    let p = this.keyPixel[k];
    if (p === 0) p = this.keyPixel[k] = packedPixel(this.nodeColor(node));
    return p;
  }

  /** Dark text on light fills, light text on dark ones (muted nodes in a dark theme, matches). */
  textOn(fill: string): string {
    const p = packedPixel(fill);
    const lum = (0.2126 * (p & 255) + 0.7152 * ((p >>> 8) & 255) + 0.0722 * ((p >>> 16) & 255)) / 255;
    return lum > 0.45 ? this.palette.text : '#ffffff';
  }

  /**
   * Where the canvas is in the viewport, cached: reading it forces a layout of the whole page
   * when its DOM changed (the table, the stats), which a mouse move should not wait for. The
   * input drops it when the graph is resized or scrolled, or the window resized.
   */
  origin(): { left: number; top: number } {
    if (this.originCache === null) {
      const r = this.canvas.getBoundingClientRect();
      this.originCache = { left: r.left, top: r.top };
    }
    return this.originCache;
  }

  invalidateOrigin(): void {
    this.originCache = null;
  }

  /** The nodes drawn in a row in the last draw, with their x and width (in drawing order). */
  row(depth: number): Array<{ node: CallNode; x: number; w: number }> {
    return this.hits.row(depth);
  }

  /** The node drawn at a point (CSS px of the canvas) in the last draw. */
  hit(px: number, py: number): CallNode | undefined {
    return py < 0 ? undefined : this.hits.at(px, Math.floor(py / ROW_HEIGHT));
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
