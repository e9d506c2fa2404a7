// The differential flame graph: the baseline (another run's ProfileModel: an earlier run of the
// page's, or a file's bodies aggregated by a model of their own), the colour of each node by its
// change of share (model/diff.ts), the legend, and the table of changes. The App gives the graph
// colourOf as its colour hook.

import { diffTrees, DiffRow, ProfileDiff } from '../model/diff';
import { GroupBy, ProfileModel } from '../model/profile';
import type { CallNode, CallTree, ViewOptions } from '../model/profile';
import { el } from './dom';
import { hslToRgb, Palette, rgbCss } from './theme';

/** Changes smaller than this (a share of all samples) are drawn neutral. */
export const DIFF_THRESHOLD = 0.002;
/** The change drawn fully saturated. */
const FULL_CHANGE = 0.1;

/** The colour of a change of share: red for more, blue for less, grey within the threshold. */
export function diffRgb(delta: number, kind: Palette['kind']): [number, number, number] {
  const light = kind === 'light' ? 0.72 : 0.5;
  if (Math.abs(delta) < DIFF_THRESHOLD) return hslToRgb(0, 0, light);
  const s = 0.25 + 0.75 * Math.min(1, Math.sqrt(Math.abs(delta) / FULL_CHANGE));
  return hslToRgb(delta > 0 ? 0 : 215, s, light);
}

const signed = (d: number) => `${d > 0 ? '+' : d < 0 ? '−' : '±'}${Math.abs(100 * d).toFixed(2)}%`;
const share = (s: number) => `${(100 * s).toFixed(2)}%`;
const rootOf = (n: CallNode): CallNode => {
  while (n.parent !== null) n = n.parent;
  return n;
};

export class DiffView {
  baseline: ProfileModel | null = null;
  label = '';
  diff: ProfileDiff | null = null;
  readonly legendEl = el('div', { id: 'diff-legend', className: 'diff-legend' });
  readonly element: HTMLTableElement;
  private readonly body = el('tbody');
  private kind: Palette['kind'] = 'light';
  /** What the table shows (tests wait for it). */
  key = '';

  constructor() {
    const head = el('thead', {}, el('tr', {}, el('th', { textContent: 'Path' }), el('th', { textContent: 'Now' }), el('th', { textContent: 'Baseline' }), el('th', { textContent: 'Change' })));
    this.element = el('table', { id: 'diff-table', className: 'diff-table' }, head, this.body);
    this.element.hidden = true;
    this.legendEl.hidden = true;
  }

  /** Sets the baseline: another run's model, read only (null: none). */
  setBaseline(model: ProfileModel | null, label: string): void {
    this.baseline = model;
    this.label = label;
    this.diff = null;
    this.key = '';
    this.element.hidden = this.legendEl.hidden = this.baseline === null;
  }

  /** Compares the current tree with the baseline's of the same grouping and thread. */
  update(current: CallTree | undefined, model: ProfileModel, groupBy: GroupBy, thread: number | undefined, view: ViewOptions, palette: Palette, version: string): void {
    const b = this.baseline;
    if (b === null) return;
    this.kind = palette.kind;
    this.diff = diffTrees(current, (k) => model.keyInfo(groupBy, k), b.tree(groupBy, thread, view), (k) => b.keyInfo(groupBy, k), groupBy === 'function');
    this.showLegend();
    if (version !== this.key) this.showTable(this.diff.rows, version);
  }

  /**
   * The tooltip's line for `node` while a baseline is set: its share of all samples there and
   * here, and the change (undefined without a baseline).
   */
  describe(node: CallNode): string | undefined {
    const delta = this.baseline === null ? undefined : this.diff?.deltaOf.get(node);
    if (delta === undefined || node.parent === null) return undefined;
    const total = rootOf(node).total;
    const now = total > 0 ? node.total / total : 0;
    return `vs ${this.label}: ${share(now - delta)} → ${share(now)} of all samples (${signed(delta)})`;
  }

  /** The graph's colour hook while a baseline is set. */
  colourOf(node: CallNode): string {
    return rgbCss(diffRgb(this.diff?.deltaOf.get(node) ?? 0, this.kind));
  }

  private showLegend(): void {
    const swatch = (d: number, text: string) => {
      const i = el('i');
      i.style.background = rgbCss(diffRgb(d, this.kind));
      return el('span', { className: 'diff-swatch' }, i, text);
    };
    this.legendEl.replaceChildren(
      `Compared with ${this.label}: colour = change of share of all samples —`,
      swatch(-FULL_CHANGE, `less (≤ −${100 * FULL_CHANGE}%)`),
      swatch(-0.01, '−1%'),
      swatch(0, `within ±${100 * DIFF_THRESHOLD}%`),
      swatch(0.01, '+1%'),
      swatch(FULL_CHANGE, `more (≥ +${100 * FULL_CHANGE}%)`),
    );
  }

  private showTable(rows: DiffRow[], version: string): void {
    this.key = version;
    this.body.replaceChildren(
      ...rows.slice(0, 200).map((r) => {
        const tr = el('tr', {}, el('td', { className: 'name', textContent: r.names[r.names.length - 1], title: r.names.join(' > ') }), el('td', { textContent: share(r.current) }), el('td', { textContent: share(r.baseline) }), el('td', { className: 'delta', textContent: signed(r.delta) }));
        tr.dataset.path = r.names.join(' > ');
        tr.dataset.delta = String(r.delta);
        tr.style.setProperty('--delta', rgbCss(diffRgb(r.delta, this.kind)));
        return tr;
      }),
    );
  }
}
