// The table beside the flame graph: functions (or lines) by own and total samples, as
// `py-spy top` shows them. Rebuilt when the data or the view changes, at most every
// MIN_INTERVAL_MS while live, so that a fast stream does not spend its frames on the DOM.
// By keyboard: the sortable headers are tab stops (Enter or Space sorts); the rows are one tab
// stop, Up/Down/Home/End move between them, Enter searches for the row's function (a click),
// Ctrl/Cmd+Enter opens its source (a double-click).

import { GroupBy, locationLabel, ProfileModel, TableRow, ViewOptions } from '../model/profile';
import { el, nf, pct } from './dom';

const ROWS = 200;
const MIN_INTERVAL_MS = 250;

export type TableSort = 'self' | 'total';

export interface TableView {
  model: ProfileModel;
  groupBy: GroupBy;
  thread: number | undefined;
  sort: TableSort;
  /** Which part of each stack and which samples (the debugger hidden, by task, waiting tasks). */
  view: ViewOptions;
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
  /** The rows shown, by key (for their tooltips). */
  private rowInfo = new Map<string, TableRow>();
  /** The row that is the rows' tab stop. */
  private focusRow = 0;

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
    this.body.addEventListener('pointerover', (e) => {
      const tr = (e.target as HTMLElement).closest('tr');
      const r = tr && this.rowInfo.get(tr.dataset.key ?? '');
      if (tr && r && !tr.title) tr.title = `${r.info.function}\n${locationLabel(r.info)}\nown ${nf.format(Number(tr.dataset.self))} · total ${nf.format(Number(tr.dataset.total))} samples\nDouble-click (Ctrl+Enter) to open the source`;
    });
    this.head.addEventListener('keydown', (e) => {
      const s = (e.target as HTMLElement).closest('th')?.dataset.sort;
      if ((e.key === 'Enter' || e.key === ' ') && (s === 'self' || s === 'total')) {
        e.preventDefault();
        events.sort(s);
      }
    });
    this.body.addEventListener('focusin', (e) => {
      const tr = (e.target as HTMLElement).closest('tr');
      if (tr) this.setFocusRow(tr.sectionRowIndex);
    });
    this.body.addEventListener('keydown', (e) => {
      const k = rowKey(e);
      const rows = this.body.rows;
      let to = -1;
      if (e.key === 'ArrowDown') to = Math.min(this.focusRow + 1, rows.length - 1);
      else if (e.key === 'ArrowUp') to = Math.max(this.focusRow - 1, 0);
      else if (e.key === 'Home') to = 0;
      else if (e.key === 'End') to = rows.length - 1;
      else if (e.key === 'Enter' && k) {
        e.preventDefault();
        if (e.ctrlKey || e.metaKey) events.open(Number(k));
        else events.select(Number(k));
        return;
      } else return;
      e.preventDefault();
      if (to >= 0) (rows[to] as HTMLElement).focus();
    });
  }

  /** Forgets what is shown, so that the next update rebuilds it (a new run). */
  clear(): void {
    this.key = '';
  }

  /** Brings the table up to date; with `throttle`, while live, later and at most every MIN_INTERVAL_MS. */
  update(throttle: boolean): void {
    const v = this.view();
    const key = `${v.model.version}:${v.groupBy}:${v.sort}:${v.thread}:${v.view.hideDebugger}:${v.view.byTask}:${v.view.waiting}`;
    if (this.key === key) return;
    const now = performance.now();
    if (throttle && v.live) {
      // Also when due now: in a task of its own, not in the animation frame that draws the graph,
      // so that an input event waits for one of the two, not for both.
      if (this.timer === undefined)
        this.timer = setTimeout(
          () => {
            this.timer = undefined;
            this.update(false);
          },
          Math.max(0, MIN_INTERVAL_MS - (now - this.time)),
        );
      return;
    }
    this.key = key;
    this.time = now;
    this.renderHead(v);
    this.renderRows(v);
  }

  /** Makes row `i` the rows' one tab stop. */
  private setFocusRow(i: number): void {
    const rows = this.body.rows;
    if (rows[this.focusRow]) rows[this.focusRow].tabIndex = -1;
    this.focusRow = i;
    if (rows[i]) rows[i].tabIndex = 0;
  }

  /** The header, updated in place: a header sorted by keyboard keeps the focus. */
  private renderHead(v: TableView): void {
    if (this.head.rows.length === 0) {
      const th = (id: TableSort) => {
        const h = el('th', { className: 'num sortable', title: `Sort by ${id === 'self' ? 'own' : 'total'} samples`, tabIndex: 0 });
        h.dataset.sort = id;
        h.setAttribute('role', 'button');
        return h;
      };
      this.head.append(el('tr', {}, th('self'), th('total'), el('th')));
    }
    const cells = this.head.rows[0].cells;
    (['self', 'total'] as const).forEach((id, i) => {
      const h = cells[i];
      h.className = `num sortable${v.sort === id ? ' sorted' : ''}`;
      h.textContent = (id === 'self' ? 'Own' : 'Total') + (v.sort === id ? ' ▾' : '');
      if (v.sort === id) h.setAttribute('aria-sort', 'descending');
      else h.removeAttribute('aria-sort');
    });
    cells[2].textContent = v.groupBy === 'line' ? 'Line' : 'Function';
  }


  private renderRows(v: TableView): void {
    // Shares of what the view holds (without waiting tasks, of running code only).
    const whole = v.model.sampleCount(v.thread, v.view);
    const rows = v.model.table(v.groupBy, v.thread, v.sort, ROWS, v.view);
    this.rowInfo = new Map(rows.map((r) => [String(r.key), r]));
    // Rows are reused and only their changed cells rewritten: the table refreshes several times
    // a second while live, and a row under the mouse keeps its identity for clicks.
    const trs = this.body.rows;
    while (trs.length > rows.length) this.body.deleteRow(-1);
    if (this.focusRow >= rows.length) this.focusRow = Math.max(0, rows.length - 1);
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
      const tabIndex = i === this.focusRow ? 0 : -1;
      // (A row without the attribute says tabIndex -1 too, but cannot take the focus.)
      if (tr.getAttribute('tabindex') !== String(tabIndex)) tr.tabIndex = tabIndex;
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
        // The tooltip text is written when the pointer comes over the row (see the constructor),
        // not for every row at every refresh.
        if (tr.title) tr.removeAttribute('title');
      }
    });
  }
}
