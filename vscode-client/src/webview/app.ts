// The flame graph page: receives messages from the extension (or a test page; run-messages.ts),
// aggregates batches into the model as they arrive (the one place that aggregates them), and
// redraws at most once per animation frame. The parts: toolbar.ts (header and controls),
// navigation.ts (breadcrumb and details), tooltip.ts, search.ts, table.ts, input.ts (mouse, keys,
// messages), persist.ts (kept choices), baselines.ts and diff.ts (comparison), scheduler.ts.

import { CallNode, GroupBy, KeyInfo, ProfileModel, processOfKey, threadLabel, ViewOptions } from '../model/profile';
import type { ProfilingDataBody } from '../model/protocol';
import { Baseline, Baselines } from './baselines';
import { DiffView } from './diff';
import { FlameGraph } from './flame';
import { Input } from './input';
import type { FromWebview, RunInfo, StoppedInfo, ToWebview } from './messages';
import { el } from './dom';
import { Navigation } from './navigation';
import { applyMessage } from './run-messages';
import { findReveal } from './reveal';
import { loadPersisted, Persisted } from './persist';
import { FrameScheduler } from './scheduler';
import { SearchMatcher, showMatches } from './search';
import { FunctionTable, TableSort } from './table';
import { readPalette } from './theme';
import { TimelineStrip } from './timeline';
import type { TimeRange } from '../model/timeline';
import { overlayText, Toolbar, ViewState } from './toolbar';
import { Tooltip } from './tooltip';

export interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}

export class App {
  model = new ProfileModel();
  state: ViewState = 'idle';
  run: RunInfo | undefined;
  stopped: StoppedInfo | undefined;
  errorMessage = '';
  idleMessage = 'Start profiling from the debug toolbar to see a live flame graph.';
  /** Samples of the run this page never received (see the 'replay' message). */
  omittedSamples = 0;
  groupBy: GroupBy;
  /** Shows each stack below its last debugger frame (debugpy's launcher, pydevd's hooks). */
  hideDebugger: boolean;
  /** Shows each stack from its outermost asyncio task on (the roots are tasks). */
  byTask: boolean;
  /** Shows the samples of waiting tasks, when the run has them (see waitingAvailable). */
  waitingTasks: boolean;
  thread: number | undefined = undefined;
  tableSort: TableSort;
  search = '';
  /** The time range the graph and table are limited to (the timeline strip's selection). */
  range: TimeRange | null = null;
  /** Number of graph draws (tests read it, and frameRequests). */
  drawCount = 0;

  /** The differential view against a baseline (diff.ts), and what it can compare with. */
  readonly diff = new DiffView();
  readonly baselines = new Baselines((labels, current, given) => this.toolbar.showBaselines(labels, current, given));
  /** Runs this page has shown and let go, which name the ones kept to compare with. */
  private runsShown = 0;
  readonly graph: FlameGraph;
  private readonly toolbar: Toolbar;
  private readonly nav: Navigation;
  readonly tooltip: Tooltip;
  private readonly table: FunctionTable;
  readonly timeline: TimelineStrip;
  readonly graphEl: HTMLElement;
  private readonly overlayEl: HTMLElement;
  readonly announceEl = el('div', { id: 'announce', className: 'sr-only' });
  private readonly scheduler = new FrameScheduler(() => this.render());
  private readonly matcher = new SearchMatcher();
  private drawnVersion = -1;
  private uiDirty = true;
  private readonly input: Input;

  get searchEl(): HTMLInputElement {
    return this.toolbar.searchEl;
  }
  get frameRequests(): number {
    return this.scheduler.requests;
  }
  /** What the table shows now (tests wait for it to catch up with the model). */
  get tableKey(): string {
    return this.table.key;
  }

  constructor(
    readonly vscode: VsCodeApi,
    container: HTMLElement,
  ) {
    const persisted = loadPersisted(vscode.getState());
    this.groupBy = persisted.groupBy;
    this.tableSort = persisted.tableSort;
    this.hideDebugger = persisted.hideDebugger;
    this.byTask = persisted.byTask;
    this.waitingTasks = persisted.waitingTasks;

    this.toolbar = new Toolbar(persisted, {
      search: (q) => this.setSearch(q),
      thread: (t) => this.setThread(t),
      groupBy: (g) => this.setGroupBy(g),
      hideDebugger: (h) => this.setHideDebugger(h),
      byTask: (on) => this.setByTask(on),
      waitingTasks: (on) => this.setWaitingTasks(on),
      resetZoom: () => this.resetZoom(),
      baseline: (i) => this.compareWith(this.baselines.choice(i)),
      pickBaselineFile: () => this.vscode.postMessage({ type: 'pickBaseline' }),
    });
    const canvas = el('canvas', { id: 'flame' });
    this.overlayEl = el('div', { id: 'overlay', className: 'overlay' });
    this.graphEl = el('div', { id: 'graph', className: 'graph', tabIndex: 0 }, canvas, this.overlayEl);
    // One tab stop with keys of its own (keyboard.ts): arrows move between nodes, Enter zooms.
    this.graphEl.setAttribute('role', 'application');
    this.graphEl.setAttribute('aria-label', 'Flame graph: arrow keys move between functions, Enter zooms in, Escape zooms out, Ctrl+Enter opens the source');
    this.announceEl.setAttribute('aria-live', 'polite');
    this.graph = new FlameGraph(canvas);
    const infoOf = (n: CallNode) => this.infoOf(n);
    this.nav = new Navigation(this.graph, this.toolbar.resetEl, infoOf, { zoomTo: (n) => this.zoomTo(n), openSource: (i) => this.openSource(i) });
    this.tooltip = new Tooltip(this.graph, infoOf, (n) => this.diff.describe(n));
    this.table = new FunctionTable(() => ({ model: this.model, groupBy: this.groupBy, thread: this.thread, sort: this.tableSort, view: this.view, live: this.state === 'live' }), {
      sort: (by) => this.setTableSort(by),
      select: (key) => this.setSearch(this.model.keyInfo(this.groupBy, key).function),
      open: (key) => this.openSource(this.model.keyInfo(this.groupBy, key)),
    });
    this.timeline = new TimelineStrip({ range: (r) => this.setRange(r) });
    container.replaceChildren(
      el(
        'div',
        { className: 'app' },
        this.toolbar.element,
        this.timeline.element,
        this.diff.legendEl,
        this.nav.crumbsEl,
        el('div', { className: 'main' }, this.graphEl, el('div', { className: 'table-wrap' }, this.table.element, this.diff.element)),
        this.nav.detailsEl,
        this.tooltip.element,
        this.announceEl,
      ),
    );
    this.input = new Input(this);
    this.toolbar.refreshThreads(this.model.threadList(), this.thread, this.model.processList());
    this.selectTree();
    this.invalidate();
  }

  // ---- messages ----------------------------------------------------------------------------

  /** A message of the extension: the run shown, its data, its end (run-messages.ts). */
  handle(msg: ToWebview): void {
    applyMessage(this, msg);
  }

  /** Another run is shown, or none: the one shown so far becomes one to compare with. */
  clearRun(): void {
    // As the whole run, whatever range was selected.
    if (this.model.totals.batches > 0) {
      this.model.setRange(null);
      this.baselines.keepRun(`run ${++this.runsShown}${this.run ? ` (${this.run.session})` : ''}`, this.model);
    }
    this.model = new ProfileModel();
    this.nav.clear();
    this.table.clear();
    this.run = undefined;
    this.stopped = undefined;
    this.errorMessage = '';
    this.omittedSamples = 0;
    this.thread = undefined;
    this.range = null;
    this.timeline.reset();
    this.graph.zoomPath = [];
    this.graph.hovered = null;
    this.graph.focused = null;
    this.tooltip.hide();
    this.matcher.invalidate();
    this.toolbar.clearThreads();
    this.selectTree();
  }

  // ---- rendering ---------------------------------------------------------------------------

  /** The run sampled waiting tasks (async "all"): only then can they be left out. */
  get waitingAvailable(): boolean {
    return this.run?.async === 'all';
  }

  /** What the graph and the table show of each stack, and which samples. */
  get view(): ViewOptions {
    return { hideDebugger: this.hideDebugger, byTask: this.byTask, waiting: this.waitingAvailable && !this.waitingTasks ? 'exclude' : 'include' };
  }

  /** The view as a string, for what redraws when it changes. */
  private get viewKey(): string {
    const v = this.view;
    return `${v.hideDebugger}:${v.byTask}:${v.waiting}`;
  }

  /** Schedules a redraw on the next animation frame; many calls before it draw once. */
  invalidate(): void {
    this.scheduler.invalidate();
  }

  /** Draws now if anything changed (tests call it to avoid waiting for a frame). */
  render(): void {
    const modelChanged = this.model.version !== this.drawnVersion;
    if (!modelChanged && !this.uiDirty) return;
    this.drawnVersion = this.model.version;
    this.uiDirty = false;
    if (modelChanged) this.toolbar.refreshThreads(this.model.threadList(), this.thread, this.model.processList());
    this.toolbar.showTaskToggles(this.run?.async === 'running' || this.run?.async === 'all' || this.model.hasTasks);
    this.toolbar.showWaitingTasks(this.waitingTasks, this.waitingAvailable);
    this.selectTree();
    this.updateSearch();
    this.drawGraph();
    this.timeline.draw({ timeline: this.model.timeline, thread: this.thread, live: this.state === 'live' || this.state === 'waiting', range: this.range, palette: this.graph.palette });
    this.toolbar.updateHeader({
      state: this.state,
      run: this.run,
      stopped: this.stopped,
      errorMessage: this.errorMessage,
      totals: this.model.totals,
      omittedSamples: this.omittedSamples,
    });
    this.nav.update(`${this.groupBy}:${this.thread}:${this.viewKey}`);
    this.table.update(modelChanged);
    this.input.refreshHover();
  }

  private selectTree(): void {
    const tree = this.model.tree(this.groupBy, this.thread, this.view);
    const model = this.model, groupBy = this.groupBy;
    if (tree !== this.graph.tree) this.graph.setTree(tree, (k) => model.keyInfo(groupBy, k));
  }

  private drawGraph(): void {
    this.graph.palette = readPalette(document.documentElement, document.body);
    const width = this.graphEl.clientWidth;
    const height = Math.max(this.graphEl.clientHeight, this.graph.contentHeight());
    this.graph.rootLabel = this.thread === undefined ? 'all threads' : threadLabel(this.thread, this.model.threads.get(this.thread), this.model.processes.get(processOfKey(this.thread) ?? 0)?.commandLine);
    this.diff.update(this.graph.tree, this.model, this.groupBy, this.thread, this.view, this.graph.palette, `${this.model.version}:${this.groupBy}:${this.thread}:${this.viewKey}:${this.graph.palette.kind}`);
    this.graph.colourHook = this.diff.baseline ? (n) => this.diff.colourOf(n) : null;
    this.graph.draw(width, height);
    this.drawCount++;
    const overlay = overlayText(this.state, this.graph.tree?.root.total ?? 0, this.thread !== undefined, this.idleMessage, this.errorMessage);
    this.overlayEl.textContent = overlay;
    this.overlayEl.hidden = overlay === '';
  }

  private updateSearch(): void {
    const infos = this.groupBy === 'line' ? this.model.lineInfos : this.model.funcs;
    showMatches(this.search, this.matcher, infos, this.model.version, this.graph, this.toolbar.matchEl);
  }

  // ---- view changes ------------------------------------------------------------------------

  infoOf(node: CallNode): KeyInfo {
    return this.model.keyInfo(this.groupBy, node.key);
  }

  /** Something shown changed: redraw on the next frame. */
  changed(): void {
    this.uiDirty = true;
    this.invalidate();
  }

  zoomTo(node: CallNode): void {
    this.graph.zoomPath = node.path();
    this.changed();
  }

  /** Zooms into the node of a function or line of the editor, and gives it the focus. */
  reveal(target: { file: string; function: string; line?: number }): void {
    this.selectTree();
    const node = findReveal(this.graph.tree, (n) => this.infoOf(n), target, this.groupBy === 'line');
    if (!node) return;
    this.zoomTo(node);
    this.graph.focused = node;
    this.render();
    this.graphEl.focus();
  }

  /** Limits the graph and the table to a time range; null shows the whole run. The zoom and the search stay. */
  setRange(r: TimeRange | null): void {
    this.range = r;
    this.model.setRange(r);
    this.graph.hovered = null;
    this.changed();
  }

  /**
   * Shows the graph as a differential flame graph against a baseline: the profilingData bodies of
   * another run (an earlier one of this page's, at `index` of runs, or one from elsewhere), or the
   * normal colours again for null.
   */
  setBaseline(bodies: readonly ProfilingDataBody[] | null, label = 'baseline', index = -1): void {
    this.compareWith(bodies === null ? null : { model: ProfileModel.of(bodies), label, index });
  }

  /** Shows the comparison with `b`, or none. */
  compareWith(b: Baseline | null): void {
    this.diff.setBaseline(b?.model ?? null, b?.label ?? '');
    this.baselines.chose(b);
    this.table.element.hidden = b !== null;
    this.changed();
  }

  resetZoom(): void {
    this.graph.zoomPath = [];
    this.changed();
  }

  setSearch(q: string): void {
    this.search = q;
    this.toolbar.showSearch(q);
    this.matcher.invalidate();
    this.changed();
  }

  setThread(thread: number | undefined): void {
    this.thread = thread;
    this.toolbar.showThread(thread);
    this.graph.hovered = null;
    this.graph.focused = null;
    this.vscode.postMessage({ type: 'thread', thread: thread ?? null });
    this.changed();
  }

  setGroupBy(g: GroupBy): void {
    if (g === this.groupBy) return;
    // A line path maps onto a function path; the reverse is ambiguous, so that resets the zoom.
    if (g === 'function') this.graph.zoomPath = this.graph.zoomPath.map((k) => this.model.functionOfFrame(k));
    else this.graph.zoomPath = [];
    this.groupBy = g;
    this.toolbar.showGroupBy(g);
    this.matcher.invalidate();
    this.graph.hovered = null;
    this.graph.focused = null;
    this.persist();
    this.changed();
  }

  setHideDebugger(hide: boolean): void {
    if (hide === this.hideDebugger) return;
    // Paths differ between the two trees (one lacks the debugger's prefix): zoom out.
    this.hideDebugger = hide;
    this.toolbar.showHideDebugger(hide);
    this.graph.zoomPath = [];
    this.graph.hovered = null;
    this.graph.focused = null;
    this.persist();
    // The extension exports (and summarizes) what the panel shows.
    this.vscode.postMessage({ type: 'hideDebugger', hideDebugger: hide });
    this.changed();
  }

  /** "By task": each stack from its outermost task frame on. The paths change: zoom out. */
  setByTask(on: boolean): void {
    if (on === this.byTask) return;
    this.byTask = on;
    this.toolbar.showByTask(on);
    this.viewChanged();
  }

  /** "Waiting tasks": with or without the samples of waiting tasks (when the run has them). */
  setWaitingTasks(on: boolean): void {
    if (on === this.waitingTasks) return;
    this.waitingTasks = on;
    this.toolbar.showWaitingTasks(on, this.waitingAvailable);
    this.viewChanged();
  }

  private viewChanged(): void {
    this.graph.zoomPath = [];
    this.graph.hovered = null;
    this.graph.focused = null;
    this.persist();
    this.changed();
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
    this.vscode.setState({ groupBy: this.groupBy, tableSort: this.tableSort, hideDebugger: this.hideDebugger, byTask: this.byTask, waitingTasks: this.waitingTasks } satisfies Persisted);
  }
}
