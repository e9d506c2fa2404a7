// The table beside the flame graph: functions (or lines) by own and total samples, as
// `py-spy top` shows them. Rebuilt when the data or the view changes, at most every
// MIN_INTERVAL_MS while live, so that a fast stream does not spend its frames on the DOM.

import { GroupBy, locationLabel, ProfileModel } from '../model/profile';
import { el, nf, pct } from './dom';

const ROWS = 200;
const MIN_INTERVAL_MS = 250;

export type TableSort = 'self' | 'total';

export interface TableView {
  model: ProfileModel;
  groupBy: GroupBy;
  thread: number | undefined;
  sort: TableSort;
  hideDebugger: boolean;
  live: boolean;
}

export interface TableEvents {
  sort(by: TableSort): void;
  /** A row was clicked: the key of its function or line. */
  select(key: number): void;
  /** A row was double-clicked. */
  open(key: number): void;
}

export class FunctionTable {
  readonly element: HTMLTableElement;
  /** What the table shows now: the model version, grouping, sort, thread and filter (tests read it). */
  key = '';
  private readonly head = el('thead');
  private readonly body = el('tbody');
  private time = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly view: () => TableView,
    events: TableEvents,
  ) {
    this.element = el('table', { id: 'table' }, this.head, this.body);
    this.head.addEventListener('click', (e) => {
      const s = (e.target as HTMLElement).closest('th')?.dataset.sort;
      if (s === 'self' || s === 'total') events.sort(s);
    });
    const rowKey = (e: Event) => (e.target as HTMLElement).closest('tr')?.dataset.key;
    this.body.addEventListener('click', (e) => {
      const k = rowKey(e);
      if (k) events.select(Number(k));
    });
    this.body.addEventListener('dblclick', (e) => {
      const k = rowKey(e);
      if (k) events.open(Number(k));
    });
  }

  /** Forgets what is shown, so that the next update rebuilds it (a new run). */
  clear(): void {
    this.key = '';
  }

  /** Brings the table up to date; with `throttle`, while live, at most every MIN_INTERVAL_MS. */
  update(throttle: boolean): void {
    const v = this.view();
    const key = `${v.model.version}:${v.groupBy}:${v.sort}:${v.thread}:${v.hideDebugger}`;
    if (this.key === key) return;
    const now = performance.now();
    if (throttle && v.live && now - this.time < MIN_INTERVAL_MS) {
      if (this.timer === undefined)
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.update(false);
        }, MIN_INTERVAL_MS);
      return;
    }
    this.key = key;
    this.time = now;
    this.renderHead(v);
    this.renderRows(v);
  }

  private renderHead(v: TableView): void {
    const th = (id: TableSort, text: string) => {
      const h = el('th', { className: `num sortable${v.sort === id ? ' sorted' : ''}`, textContent: text + (v.sort === id ? ' ▾' : '') });
      h.dataset.sort = id;
      h.title = `Sort by ${id === 'self' ? 'own' : 'total'} samples`;
      return h;
    };
    this.head.replaceChildren(el('tr', {}, th('self', 'Own'), th('total', 'Total'), el('th', { textContent: v.groupBy === 'line' ? 'Line' : 'Function' })));
  }

  private renderRows(v: TableView): void {
    const whole = v.model.view(v.thread)?.sampleCount ?? 0;
    const rows = v.model.table(v.groupBy, v.thread, v.sort, ROWS, v.hideDebugger);
    // Rows are reused and only their changed cells rewritten: the table refreshes several times
    // a second while live, and a row under the mouse keeps its identity for clicks.
    const trs = this.body.rows;
    while (trs.length > rows.length) this.body.deleteRow(-1);
    rows.forEach((r, i) => {
      let tr = trs[i] as HTMLTableRowElement | undefined;
      if (!tr) {
        tr = el(
          'tr',
          {},
          el('td', { className: 'num' }),
          el('td', { className: 'num' }),
          el('td', { className: 'fn' }, el('span', { className: 'name' }), el('span', { className: 'loc' })),
        );
        this.body.append(tr);
      }
      const set = (node: Element, text: string) => {
        if (node.textContent !== text) node.textContent = text;
      };
      const cells = tr.cells;
      set(cells[0], pct(r.self, whole));
      set(cells[1], pct(r.total, whole));
      set(cells[2].firstChild as Element, r.info.function);
      set(cells[2].lastChild as Element, ' ' + locationLabel(r.info));
      const key = String(r.key);
      if (tr.dataset.key !== key || tr.dataset.self !== String(r.self) || tr.dataset.total !== String(r.total)) {
        tr.dataset.key = key;
        tr.dataset.self = String(r.self);
        tr.dataset.total = String(r.total);
        tr.title = `${r.info.function}\n${locationLabel(r.info)}\nown ${nf.format(r.self)} · total ${nf.format(r.total)} samples\nDouble-click to open the source`;
      }
    });
  }
}
