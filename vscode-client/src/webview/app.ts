// The flame graph page: receives messages from the extension (or a test page), aggregates batches
// into the model as they arrive, and redraws at most once per animation frame.

import { CallNode, GroupBy, KeyInfo, locationLabel, ProfileModel, threadLabel } from '../model/profile';
import { FlameGraph } from './flame';
import type { FromWebview, RunInfo, StoppedInfo, ToWebview } from './messages';
import { el, nf, pct } from './dom';
import { FunctionTable, TableSort } from './table';
import { readPalette } from './theme';

export interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}

type ViewState = 'idle' | 'waiting' | 'live' | 'stopped' | 'error';

interface Persisted {
  groupBy?: GroupBy;
  tableSort?: TableSort;
  hideDebugger?: boolean;
}

function seconds(ms: number): string {
  return ms >= 10000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 1000).toFixed(2)} s`;
}

export class App {
  model = new ProfileModel();
  state: ViewState = 'idle';
  run: RunInfo | undefined;
  stopped: StoppedInfo | undefined;
  errorMessage = '';
  idleMessage = 'Start profiling from the debug toolbar to see a live flame graph.';
  groupBy: GroupBy = 'function';
  /** Shows each stack below its last debugger frame (debugpy's launcher, pydevd's hooks). */
  hideDebugger = true;
  thread: number | undefined = undefined;
  tableSort: TableSort = 'self';
  search = '';
  /** Number of graph draws, and of animation frames requested (tests read both). */
  drawCount = 0;
  frameRequests = 0;

  readonly graph: FlameGraph;
  /** What the table shows now (tests wait for it to catch up with the model). */
  get tableKey(): string {
    return this.table.key;
  }
  private readonly root: HTMLElement;
  private readonly stateEl: HTMLElement;
  private readonly statsEl: HTMLElement;
  private readonly searchEl: HTMLInputElement;
  private readonly matchEl: HTMLElement;
  private readonly threadEl: HTMLSelectElement;
  private readonly groupEl: HTMLSelectElement;
  private readonly debuggerEl: HTMLInputElement;
  private readonly resetEl: HTMLButtonElement;
  private readonly crumbsEl: HTMLElement;
  private readonly graphEl: HTMLElement;
  private readonly overlayEl: HTMLElement;
  private readonly tooltipEl: HTMLElement;
  private readonly table: FunctionTable;
  private readonly detailsEl: HTMLElement;

  private frameRequested = false;
  private drawnVersion = -1;
  private uiDirty = true;
  private crumbKey = '';
  private detailsKey = '';
  /** The share of the zoomed node in the details bar, updated in place as data arrives. */
  private detailsShare: Text | undefined;
  private threadsShown = '';
  private matchKeys: Set<number> | null = null;
  private matchKeysVersion = -1;
  private mouse: { x: number; y: number } | null = null;

  constructor(
    readonly vscode: VsCodeApi,
    container: HTMLElement,
  ) {
    const persisted = (vscode.getState() ?? {}) as Persisted;
    if (persisted.groupBy === 'line' || persisted.groupBy === 'function') this.groupBy = persisted.groupBy;
    if (persisted.tableSort === 'self' || persisted.tableSort === 'total') this.tableSort = persisted.tableSort;
    if (typeof persisted.hideDebugger === 'boolean') this.hideDebugger = persisted.hideDebugger;

    this.stateEl = el('span', { className: 'state', id: 'state' });
    this.statsEl = el('span', { className: 'stats', id: 'stats' });
    this.searchEl = el('input', { type: 'search', id: 'search', placeholder: 'Search (Ctrl+F)', spellcheck: false });
    this.searchEl.setAttribute('aria-label', 'Search functions and files');
    this.matchEl = el('span', { className: 'match', id: 'match' });
    this.threadEl = el('select', { id: 'thread', title: 'Thread' });
    this.threadEl.setAttribute('aria-label', 'Thread');
    this.groupEl = el(
      'select',
      { id: 'group', title: 'Group by' },
      el('option', { value: 'function', textContent: 'By function' }),
      el('option', { value: 'line', textContent: 'By line' }),
    );
    this.groupEl.setAttribute('aria-label', 'Group by');
    this.groupEl.value = this.groupBy;
    this.debuggerEl = el('input', { type: 'checkbox', id: 'hide-debugger', checked: this.hideDebugger });
    const debuggerLabel = el('label', { className: 'check', title: "Hide debugpy's frames: each stack starts below the debugger's last frame; samples taken in the debugger itself show as (debugger)" }, this.debuggerEl, 'Hide debugger');
    this.resetEl = el('button', { id: 'reset', textContent: 'Reset zoom', title: 'Reset zoom (Escape)' });
    this.crumbsEl = el('nav', { id: 'breadcrumb', className: 'breadcrumb' });
    this.crumbsEl.setAttribute('aria-label', 'Zoom path');
    const canvas = el('canvas', { id: 'flame' });
    this.overlayEl = el('div', { id: 'overlay', className: 'overlay' });
    this.graphEl = el('div', { id: 'graph', className: 'graph', tabIndex: 0 }, canvas, this.overlayEl);
    this.tooltipEl = el('div', { id: 'tooltip', className: 'tooltip', hidden: true });
    this.tooltipEl.setAttribute('role', 'tooltip');
    this.table = new FunctionTable(() => ({ model: this.model, groupBy: this.groupBy, thread: this.thread, sort: this.tableSort, hideDebugger: this.hideDebugger, live: this.state === 'live' }), {
      sort: (by) => this.setTableSort(by),
      select: (key) => this.setSearch(this.model.keyInfo(this.groupBy, key).function),
      open: (key) => this.openSource(this.model.keyInfo(this.groupBy, key)),
    });
    this.detailsEl = el('div', { id: 'details', className: 'details' });
    this.root = el(
      'div',
      { className: 'app' },
      el('header', { className: 'toolbar' }, this.stateEl, this.statsEl, el('span', { className: 'spacer' }), this.searchEl, this.matchEl, this.threadEl, this.groupEl, debuggerLabel, this.resetEl),
      this.crumbsEl,
      el('div', { className: 'main' }, this.graphEl, el('div', { className: 'table-wrap' }, this.table.element)),
      this.detailsEl,
      this.tooltipEl,
    );
    container.replaceChildren(this.root);
    this.graph = new FlameGraph(canvas);
    this.bindEvents();
    this.refreshThreads();
    this.selectTree();
    this.invalidate();
  }

  // ---- messages ----------------------------------------------------------------------------

  handle(msg: ToWebview): void {
    switch (msg.type) {
      case 'idle':
        this.reset();
        this.state = 'idle';
        this.idleMessage = msg.message;
        break;
      case 'run':
        this.reset();
        this.run = msg.run;
        this.state = 'waiting';
        break;
      case 'data':
        this.model.addBatch(msg.body);
        if (this.state === 'waiting' || this.state === 'idle') this.state = 'live';
        break;
      case 'snapshot':
        this.reset();
        this.run = msg.run;
        this.model.addSnapshot(msg.snapshot);
        this.stopped = msg.stopped;
        this.errorMessage = msg.error ?? '';
        this.state = msg.error ? 'error' : msg.stopped ? 'stopped' : this.model.totals.batches > 0 ? 'live' : 'waiting';
        break;
      case 'stopped':
        this.stopped = msg.stopped;
        if (msg.stopped.reason === 'error') {
          this.state = 'error';
          this.errorMessage = msg.stopped.message ?? 'Sampling failed.';
        } else this.state = 'stopped';
        break;
      case 'error':
        this.state = 'error';
        this.errorMessage = msg.message;
        break;
    }
    this.uiDirty = true;
    this.invalidate();
  }

  private reset(): void {
    this.model = new ProfileModel();
    this.crumbKey = this.detailsKey = '';
    this.table.clear();
    this.run = undefined;
    this.stopped = undefined;
    this.errorMessage = '';
    this.thread = undefined;
    this.graph.zoomPath = [];
    this.graph.hovered = null;
    this.hideTooltip();
    this.matchKeys = null;
    this.matchKeysVersion = -1;
    this.threadsShown = '';
    this.selectTree();
  }

  // ---- rendering ---------------------------------------------------------------------------

  /** Schedules a redraw on the next animation frame; many calls before it draw once. */
  invalidate(): void {
    if (this.frameRequested) return;
    this.frameRequested = true;
    this.frameRequests++;
    requestAnimationFrame(() => {
      this.frameRequested = false;
      this.render();
    });
  }

  /** Draws now if anything changed (tests call it to avoid waiting for a frame). */
  render(): void {
    const modelChanged = this.model.version !== this.drawnVersion;
    if (!modelChanged && !this.uiDirty) return;
    this.drawnVersion = this.model.version;
    this.uiDirty = false;
    if (modelChanged) this.refreshThreads();
    this.selectTree();
    this.updateSearch();
    this.drawGraph();
    this.updateHeader();
    this.updateBreadcrumb();
    this.updateDetails();
    this.table.update(modelChanged);
    if (this.mouse) this.hoverAt(this.mouse.x, this.mouse.y, false);
  }

  private selectTree(): void {
    const tree = this.model.tree(this.groupBy, this.thread, this.hideDebugger);
    const model = this.model, groupBy = this.groupBy;
    if (tree !== this.graph.tree) this.graph.setTree(tree, (k) => model.keyInfo(groupBy, k));
  }

  private drawGraph(): void {
    this.graph.palette = readPalette(document.documentElement, document.body);
    const width = this.graphEl.clientWidth;
    const height = Math.max(this.graphEl.clientHeight, this.graph.contentHeight());
    this.graph.rootLabel = this.thread === undefined ? 'all threads' : threadLabel(this.thread, this.model.threads.get(this.thread));
    this.graph.draw(width, height);
    this.drawCount++;
    const total = this.graph.tree?.root.total ?? 0;
    let overlay = '';
    if (this.state === 'idle') overlay = this.idleMessage;
    else if (this.state === 'waiting') overlay = 'Waiting for profiling data…';
    else if (this.state === 'error' && total === 0) overlay = this.errorMessage;
    else if (total === 0) overlay = this.thread === undefined ? 'No samples.' : 'No samples in this thread.';
    this.overlayEl.textContent = overlay;
    this.overlayEl.hidden = overlay === '';
  }

  private updateHeader(): void {
    const t = this.model.totals;
    this.stateEl.dataset.state = this.state;
    const label: Record<ViewState, string> = { idle: 'Not profiling', waiting: 'Waiting for data', live: 'Live', stopped: 'Stopped', error: 'Error' };
    this.stateEl.textContent = label[this.state];
    let stats = '';
    if (this.state === 'stopped' && this.stopped) {
      const s = this.stopped.summary;
      stats = `${nf.format(s.sampleCount)} samples in ${seconds(s.duration)}`;
      if (s.errorCount) stats += `, ${nf.format(s.errorCount)} read errors`;
      if (s.droppedSampleCount) stats += `, ${nf.format(s.droppedSampleCount)} dropped`;
      if (s.outputPath) stats += ` — saved to ${s.outputPath}`;
      if (this.stopped.message) stats += ` — ${this.stopped.message}`;
    } else if (this.state === 'error') {
      stats = this.errorMessage;
    } else if (this.state !== 'idle') {
      const rate = t.duration > 0 ? (t.sampleCount * 1000) / t.duration : 0;
      stats = `${nf.format(t.sampleCount)} samples`;
      if (t.duration > 0) stats += ` · ${rate.toFixed(rate >= 100 ? 0 : 1)} samples/s over ${seconds(t.duration)}`;
      if (t.droppedSampleCount) stats += ` · ${nf.format(t.droppedSampleCount)} dropped`;
      if (t.errorCount) stats += ` · ${nf.format(t.errorCount)} read errors`;
    }
    if (this.run && this.state !== 'idle') {
      const who = [this.run.session, this.run.pid ? `pid ${this.run.pid}` : '', this.run.pythonVersion ? `Python ${this.run.pythonVersion}` : '']
        .filter(Boolean)
        .join(', ');
      this.statsEl.title = who;
    }
    this.statsEl.textContent = stats;
  }

  private refreshThreads(): void {
    const list = this.model.threadList();
    const sig = list.map((t) => `${t.id}:${t.info?.name ?? ''}`).join('|');
    if (sig === this.threadsShown) return;
    this.threadsShown = sig;
    const opts = [el('option', { value: 'all', textContent: 'All threads' })];
    for (const t of list) opts.push(el('option', { value: String(t.id), textContent: threadLabel(t.id, t.info) }));
    this.threadEl.replaceChildren(...opts);
    this.threadEl.value = this.thread === undefined ? 'all' : String(this.thread);
    if (this.threadEl.value === '') this.threadEl.value = 'all';
  }

  private updateSearch(): void {
    const q = this.search.trim().toLowerCase();
    if (!q) {
      this.graph.matches = null;
      this.matchEl.textContent = '';
      return;
    }
    const infos = this.groupBy === 'line' ? this.model.lineInfos : this.model.funcs;
    if (this.matchKeys === null || this.matchKeysVersion !== this.model.version) {
      const keys = new Set<number>();
      infos.forEach((info, k) => {
        if (info.function.toLowerCase().includes(q) || info.file.toLowerCase().includes(q)) keys.add(k);
      });
      this.matchKeys = keys;
      this.matchKeysVersion = this.model.version;
    }
    const keys = this.matchKeys;
    this.graph.matches = (k) => keys.has(k);
    // Samples whose stack holds a match: the totals of the outermost matching nodes.
    const tree = this.graph.tree;
    let matched = 0;
    if (tree) {
      const stack: CallNode[] = [tree.root];
      while (stack.length) {
        const n = stack.pop()!;
        if (n.parent !== null && keys.has(n.key)) {
          matched += n.total;
          continue;
        }
        if (n.children) for (const c of n.children.values()) stack.push(c);
      }
    }
    const total = tree?.root.total ?? 0;
    this.matchEl.textContent = keys.size === 0 ? 'no match' : `${pct(matched, total)} of samples`;
    this.matchEl.dataset.samples = String(matched);
  }

  private updateBreadcrumb(): void {
    const zoom = this.graph.zoomNode();
    // Rebuilt only when the zoom changed, so that hovering does not replace the buttons.
    const key = `${zoom?.path().join(',')}:${this.graph.tree === undefined}:${this.groupBy}:${this.thread}:${this.hideDebugger}:${this.graph.rootLabel}`;
    if (key === this.crumbKey) return;
    this.crumbKey = key;
    const chain: CallNode[] = [];
    for (let n: CallNode | null | undefined = zoom; n; n = n.parent) chain.push(n);
    chain.reverse();
    const items: Node[] = [];
    chain.forEach((n, i) => {
      if (i > 0) items.push(el('span', { className: 'sep', textContent: '›' }));
      const label = n.parent === null ? this.graph.rootLabel : this.infoOf(n).function;
      const b = el('button', { className: 'crumb', textContent: label, title: n.parent === null ? 'Reset zoom' : locationLabel(this.infoOf(n)) });
      b.addEventListener('click', () => this.zoomTo(n));
      items.push(b);
    });
    this.crumbsEl.replaceChildren(...items);
    this.resetEl.disabled = chain.length <= 1;
  }

  private updateDetails(): void {
    const zoom = this.graph.zoomNode();
    const share = () => ` ${pct(zoom!.total, this.graph.tree!.root.total)} of samples · `;
    // Rebuilt only when the zoom changed; new data only rewrites the share. Replacing the link
    // while live would lose clicks on it: a click is a mousedown and a mouseup on one element.
    const key = `${zoom?.path().join(',')}:${this.groupBy}:${this.thread}:${this.hideDebugger}`;
    if (key === this.detailsKey) {
      if (this.detailsShare && zoom) this.detailsShare.data = share();
      return;
    }
    this.detailsKey = key;
    this.detailsShare = undefined;
    if (!zoom || zoom.parent === null) {
      this.detailsEl.replaceChildren(el('span', { className: 'hint', textContent: 'Click a node to zoom in, Ctrl+click to open its source. Escape zooms out.' }));
      return;
    }
    const info = this.infoOf(zoom);
    this.detailsShare = document.createTextNode(share());
    const parts: (Node | string)[] = [el('strong', { textContent: info.function }), this.detailsShare];
    if (info.file && !info.native) {
      const a = el('a', { href: '#', className: 'open-source', textContent: locationLabel(info), title: 'Open source' });
      a.addEventListener('click', (e) => {
        e.preventDefault();
        this.openSource(info);
      });
      parts.push(a);
    } else parts.push(locationLabel(info));
    this.detailsEl.replaceChildren(...parts);
  }

  // ---- interaction -------------------------------------------------------------------------

  infoOf(node: CallNode): KeyInfo {
    return this.model.keyInfo(this.groupBy, node.key);
  }

  zoomTo(node: CallNode): void {
    this.graph.zoomPath = node.path();
    this.uiDirty = true;
    this.invalidate();
  }

  resetZoom(): void {
    this.graph.zoomPath = [];
    this.uiDirty = true;
    this.invalidate();
  }

  setSearch(q: string): void {
    this.search = q;
    if (this.searchEl.value !== q) this.searchEl.value = q;
    this.matchKeys = null;
    this.uiDirty = true;
    this.invalidate();
  }

  setThread(thread: number | undefined): void {
    this.thread = thread;
    this.threadEl.value = thread === undefined ? 'all' : String(thread);
    this.graph.hovered = null;
    this.uiDirty = true;
    this.invalidate();
  }

  setGroupBy(g: GroupBy): void {
    if (g === this.groupBy) return;
    // A line path maps onto a function path; the reverse is ambiguous, so that resets the zoom.
    if (g === 'function') {
      this.graph.zoomPath = this.graph.zoomPath.map((k) => this.model.functionOfFrame(k));
    } else this.graph.zoomPath = [];
    this.groupBy = g;
    this.groupEl.value = g;
    this.matchKeys = null;
    this.graph.hovered = null;
    this.persist();
    this.uiDirty = true;
    this.invalidate();
  }

  setHideDebugger(hide: boolean): void {
    if (hide === this.hideDebugger) return;
    // Paths differ between the two trees (one lacks the debugger's prefix): zoom out.
    this.hideDebugger = hide;
    this.debuggerEl.checked = hide;
    this.graph.zoomPath = [];
    this.graph.hovered = null;
    this.persist();
    this.uiDirty = true;
    this.invalidate();
  }

  setTableSort(s: TableSort): void {
    this.tableSort = s;
    this.persist();
    this.uiDirty = true;
    this.table.update(false);
  }

  openSource(info: KeyInfo): void {
    if (!info.file || info.native) return;
    this.vscode.postMessage({ type: 'openSource', file: info.file, line: info.line });
  }

  private persist(): void {
    this.vscode.setState({ groupBy: this.groupBy, tableSort: this.tableSort, hideDebugger: this.hideDebugger } satisfies Persisted);
  }

  private hideTooltip(): void {
    this.tooltipEl.hidden = true;
  }

  private hoverAt(x: number, y: number, redraw = true): void {
    const node = this.graph.hit(x, y);
    if (node !== this.graph.hovered) {
      this.graph.hovered = node ?? null;
      if (redraw) {
        this.uiDirty = true;
        this.invalidate();
      }
    }
    if (!node) {
      this.hideTooltip();
      this.graphEl.style.cursor = '';
      return;
    }
    this.graphEl.style.cursor = 'pointer';
    const total = this.graph.tree!.root.total;
    const parentTotal = node.parent ? node.parent.total : node.total;
    const tip = this.tooltipEl;
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
    }
    tip.hidden = false;
    const gr = this.graphEl.getBoundingClientRect();
    const cx = gr.left + x - this.graphEl.scrollLeft, cy = gr.top + y - this.graphEl.scrollTop;
    const tw = tip.offsetWidth, th = tip.offsetHeight;
    let left = cx + 14, top = cy + 16;
    if (left + tw > window.innerWidth - 4) left = Math.max(4, cx - tw - 10);
    if (top + th > window.innerHeight - 4) top = Math.max(4, cy - th - 10);
    tip.style.left = `${left}px`;
    tip.style.top = `${top}px`;
  }

  private canvasPoint(e: MouseEvent): { x: number; y: number } {
    const r = this.graph.canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  private bindEvents(): void {
    window.addEventListener('message', (e: MessageEvent) => {
      const msg = e.data as ToWebview;
      if (msg && typeof msg === 'object' && typeof msg.type === 'string') this.handle(msg);
    });
    const canvas = this.graph.canvas;
    canvas.addEventListener('mousemove', (e) => {
      this.mouse = this.canvasPoint(e);
      this.hoverAt(this.mouse.x, this.mouse.y);
    });
    canvas.addEventListener('mouseleave', () => {
      this.mouse = null;
      this.hideTooltip();
      if (this.graph.hovered) {
        this.graph.hovered = null;
        this.uiDirty = true;
        this.invalidate();
      }
    });
    canvas.addEventListener('click', (e) => {
      const p = this.canvasPoint(e);
      const node = this.graph.hit(p.x, p.y);
      if (!node) return;
      if ((e.ctrlKey || e.metaKey) && node.parent !== null) this.openSource(this.infoOf(node));
      else this.zoomTo(node);
    });
    this.searchEl.addEventListener('input', () => this.setSearch(this.searchEl.value));
    this.searchEl.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        if (this.searchEl.value) this.setSearch('');
        else this.searchEl.blur();
      }
    });
    this.threadEl.addEventListener('change', () => this.setThread(this.threadEl.value === 'all' ? undefined : Number(this.threadEl.value)));
    this.groupEl.addEventListener('change', () => this.setGroupBy(this.groupEl.value as GroupBy));
    this.debuggerEl.addEventListener('change', () => this.setHideDebugger(this.debuggerEl.checked));
    this.resetEl.addEventListener('click', () => this.resetZoom());
    window.addEventListener('keydown', (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'f') {
        e.preventDefault();
        this.searchEl.focus();
        this.searchEl.select();
      } else if (e.key === 'Escape' && document.activeElement !== this.searchEl) {
        const zoom = this.graph.zoomNode();
        if (zoom?.parent) this.zoomTo(zoom.parent);
      }
    });
    new ResizeObserver(() => {
      this.uiDirty = true;
      this.invalidate();
    }).observe(this.graphEl);
    // VS Code changes the theme by rewriting the body class and the root element's variables.
    const themeObserver = new MutationObserver(() => {
      this.uiDirty = true;
      this.invalidate();
    });
    themeObserver.observe(document.body, { attributes: true, attributeFilter: ['class'] });
    themeObserver.observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
  }
}

