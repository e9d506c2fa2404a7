// The timeline strip above the flame graph: samples per time bucket (model/timeline.ts), of all
// threads or of the thread shown. Dragging across it picks a time range that the graph and the
// table are limited to; Escape or "Clear range" drops it. A live run shows its last LIVE_WINDOW_MS
// (the older buckets are kept: "Show all"); a stopped run shows all of it.
// By keyboard the strip is one tab stop: Left/Right move the range by a bucket (the first press
// picks the last bucket shown), Shift+Left/Right move its end, Home/End go to the first or last
// bucket, Escape clears it.

import type { TimeRange, Timeline } from '../model/timeline';
import { el, nf } from './dom';
import type { Palette } from './theme';

export const LIVE_WINDOW_MS = 60_000;
const HEIGHT = 40;

export interface TimelineView {
  timeline: Timeline;
  thread: number | undefined;
  live: boolean;
  range: TimeRange | null;
  palette: Palette;
}

export interface TimelineEvents {
  range(r: TimeRange | null): void;
}

export class TimelineStrip {
  readonly element: HTMLElement;
  readonly canvas = el('canvas', { id: 'timeline-canvas' });
  readonly clearEl = el('button', { id: 'timeline-clear', textContent: 'Clear range', title: 'Show the whole run (Escape)' });
  readonly allEl = el('button', { id: 'timeline-all', textContent: 'Show all', title: 'Show the whole run on the timeline, not only its last 60 s' });
  private readonly labelEl = el('span', { id: 'timeline-label', className: 'timeline-label' });
  readonly stripEl: HTMLElement;
  /** A live run's strip shows the whole run rather than its last minute. */
  showAll = false;
  /** The span drawn in the last draw, and its buckets [first, end). */
  shown: TimeRange = { start: 0, end: 0 };
  private shownBuckets: [number, number] = [0, 0];
  /** Samples of the tallest bar drawn (tests read it). */
  maxShown = 0;
  private drag: { from: number; to: number } | null = null;
  private last: TimelineView | undefined;
  private readonly ctx: CanvasRenderingContext2D;

  constructor(private readonly events: TimelineEvents) {
    this.stripEl = el('div', { id: 'timeline', className: 'timeline-strip', tabIndex: 0 }, this.canvas);
    this.stripEl.setAttribute('role', 'application');
    this.stripEl.setAttribute('aria-label', 'Timeline: drag, or Left and Right arrows (Shift to widen), to limit the graph to a time range; Escape clears it');
    this.labelEl.setAttribute('aria-live', 'polite');
    this.element = el('div', { className: 'timeline' }, this.stripEl, el('div', { className: 'timeline-controls' }, this.labelEl, this.allEl, this.clearEl));
    this.ctx = this.canvas.getContext('2d')!;
    this.clearEl.addEventListener('click', () => events.range(null));
    this.allEl.addEventListener('click', () => {
      this.showAll = !this.showAll;
      if (this.last) this.draw(this.last);
    });
    this.canvas.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      this.canvas.setPointerCapture(e.pointerId);
      const t = this.timeAt(e.offsetX);
      this.drag = { from: t, to: t };
    });
    this.canvas.addEventListener('pointermove', (e) => {
      if (!this.drag) return;
      this.drag.to = this.timeAt(e.offsetX);
      if (this.last) this.draw(this.last);
    });
    this.canvas.addEventListener('pointerup', (e) => {
      const d = this.drag;
      this.drag = null;
      if (!d || !this.last) return;
      d.to = this.timeAt(e.offsetX);
      const px = (Math.abs(d.to - d.from) / Math.max(1, this.shown.end - this.shown.start)) * this.canvas.clientWidth;
      if (px >= 3) events.range(this.snap(Math.min(d.from, d.to), Math.max(d.from, d.to)));
      else this.draw(this.last);
    });
    this.stripEl.addEventListener('keydown', (e) => this.key(e));
  }

  /** Forgets the live window's choice (a new run). */
  reset(): void {
    this.showAll = false;
    this.drag = null;
  }

  draw(v: TimelineView): void {
    this.last = v;
    const tl = v.timeline;
    const n = tl.bucketCount;
    // Nothing to show before the first timed sample (or in a stream without times).
    this.element.hidden = n === 0;
    if (n === 0) return;
    const runEnd = n > 0 ? tl.bucketStart(n) : 0;
    const windowed = v.live && !this.showAll;
    const start = n === 0 ? 0 : windowed ? Math.max(tl.origin, runEnd - LIVE_WINDOW_MS) : tl.origin;
    this.shown = { start, end: Math.max(runEnd, start + tl.width) };
    this.shownBuckets = n === 0 ? [0, 0] : tl.bucketsIn(this.shown);
    this.allEl.hidden = !v.live;
    this.allEl.textContent = this.showAll ? `Last ${LIVE_WINDOW_MS / 1000} s` : 'Show all';
    this.clearEl.hidden = v.range === null;
    // The controls first: the strip gets what they leave.
    this.labelEl.textContent = this.label(v);

    const dpr = window.devicePixelRatio || 1;
    const w = this.stripEl.clientWidth, h = HEIGHT;
    if (this.canvas.width !== Math.round(w * dpr) || this.canvas.height !== Math.round(h * dpr)) {
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
      this.canvas.style.width = `${w}px`;
      this.canvas.style.height = `${h}px`;
    }
    const ctx = this.ctx, p = v.palette;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = p.background;
    ctx.fillRect(0, 0, w, h);
    const [first, end] = this.shownBuckets;
    let max = 0;
    for (let b = first; b < end; b++) max = Math.max(max, tl.count(b, v.thread));
    this.maxShown = max;
    const span = this.shown.end - this.shown.start;
    const x = (t: number) => ((t - this.shown.start) / span) * w;
    ctx.fillStyle = p.timelineBar;
    if (max > 0) {
      for (let b = first; b < end; b++) {
        const c = tl.count(b, v.thread);
        if (c === 0) continue;
        const x0 = x(tl.bucketStart(b)), x1 = x(tl.bucketStart(b + 1));
        const bh = Math.max(1, Math.round(((h - 2) * c) / max));
        ctx.fillRect(x0, h - bh, Math.max(1, x1 - x0 - (x1 - x0 > 3 ? 1 : 0)), bh);
      }
    }
    const sel = this.drag ? { start: Math.min(this.drag.from, this.drag.to), end: Math.max(this.drag.from, this.drag.to) } : v.range;
    if (sel) {
      const x0 = Math.max(0, x(sel.start)), x1 = Math.min(w, x(sel.end));
      ctx.globalAlpha = 0.25;
      ctx.fillStyle = p.focusBorder;
      ctx.fillRect(x0, 0, Math.max(1, x1 - x0), h);
      ctx.globalAlpha = 1;
      ctx.strokeStyle = p.focusBorder;
      ctx.lineWidth = 1;
      ctx.strokeRect(x0 + 0.5, 0.5, Math.max(1, x1 - x0 - 1), h - 1);
    }
    ctx.strokeStyle = p.border;
    ctx.beginPath();
    ctx.moveTo(0, h - 0.5);
    ctx.lineTo(w, h - 0.5);
    ctx.stroke();
  }

  private label(v: TimelineView): string {
    const tl = v.timeline;
    if (tl.bucketCount === 0) return 'Timeline: no timed samples yet';
    const rel = (t: number) => `${((t - tl.origin) / 1000).toFixed(1)} s`;
    if (v.range) {
      const [first, end] = tl.bucketsIn(v.range);
      let n = 0;
      for (let b = first; b < end; b++) n += tl.count(b, v.thread);
      return `Range ${rel(v.range.start)} – ${rel(v.range.end)}: ${nf.format(n)} samples`;
    }
    return `${rel(this.shown.start)} – ${rel(this.shown.end)}`;
  }

  /** The time at a point of the strip. */
  private timeAt(px: number): number {
    const w = Math.max(1, this.canvas.clientWidth);
    return this.shown.start + (Math.min(Math.max(px, 0), w) / w) * (this.shown.end - this.shown.start);
  }

  /** A range widened to whole buckets. */
  private snap(start: number, end: number): TimeRange {
    const tl = this.last!.timeline;
    const b0 = Math.max(0, Math.floor((start - tl.origin) / tl.width));
    const b1 = Math.max(b0 + 1, Math.ceil((end - tl.origin) / tl.width));
    return { start: tl.bucketStart(b0), end: tl.bucketStart(b1) };
  }

  private key(e: KeyboardEvent): void {
    const v = this.last;
    if (!v || v.timeline.bucketCount === 0) return;
    const tl = v.timeline;
    const [first, end] = this.shownBuckets;
    if (end <= first) return;
    const cur = v.range ? tl.bucketsIn(v.range) : null;
    let next: [number, number] | null | undefined;
    const clamp = (b: number) => Math.min(Math.max(b, first), end - 1);
    switch (e.key) {
      case 'ArrowLeft':
      case 'ArrowRight': {
        const d = e.key === 'ArrowRight' ? 1 : -1;
        if (!cur) next = [end - 1, end];
        else if (e.shiftKey) next = [cur[0], Math.max(cur[0] + 1, Math.min(cur[1] + d, end))];
        else {
          const s = clamp(cur[0] + d);
          next = [s, Math.min(end, s + (cur[1] - cur[0]))];
        }
        break;
      }
      case 'Home':
        next = [first, first + 1];
        break;
      case 'End':
        next = [end - 1, end];
        break;
      case 'Escape':
        if (!v.range) return;
        next = null;
        break;
      default:
        return;
    }
    e.preventDefault();
    e.stopPropagation();
    const range = next === null ? null : { start: tl.bucketStart(next[0]), end: tl.bucketStart(next[1]) };
    // Keys may come faster than frames: the next one moves from this range, not the one drawn.
    this.last = { ...v, range };
    this.events.range(range);
  }
}
