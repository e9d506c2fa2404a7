// The page's toolbar: the state and statistics of the run, and the controls (search, thread,
// grouping, "Hide debugger", "By task", "Waiting tasks", reset zoom). It only shows values and reports the user's changes;
// the App owns the view state.

import type { GroupBy, ModelTotals } from '../model/profile';
import { threadLabel } from '../model/profile';
import type { ThreadInfo } from '../model/protocol';
import { el, nf } from './dom';
import { RUN_PATH_LABEL, type RunInfo, type StoppedInfo } from './messages';

export type ViewState = 'idle' | 'waiting' | 'live' | 'stopped' | 'error';

export interface ToolbarEvents {
  search(q: string): void;
  thread(thread: number | undefined): void;
  groupBy(g: GroupBy): void;
  hideDebugger(hide: boolean): void;
  byTask(on: boolean): void;
  waitingTasks(on: boolean): void;
  resetZoom(): void;
  /** A baseline run was picked (its index in the list given to showBaselines), none (-1), or the file baseline (FILE_BASELINE). */
  baseline(index: number): void;
  /** "Compare with a file…" was picked: the extension asks for the file. */
  pickBaselineFile(): void;
}

/** The baseline choice of a profile file's (set by the extension, see showBaselines). */
export const FILE_BASELINE = -2;
/** The choice that asks for a profile file to compare with. */
const PICK_FILE = -3;

export const BY_TASK_TITLE = 'Each stack from its outermost asyncio task on: the roots are tasks (a run sampled with dapprof.profiling.async "running" or "all"); stacks without a task as they are';
export const WAITING_TITLE = 'Include the samples of waiting asyncio tasks (wall time: where tasks wait); off: only running code (CPU)';
export const WAITING_UNAVAILABLE_TITLE = 'Waiting tasks are sampled only with dapprof.profiling.async set to "all": set it, then start profiling again';

/** What the header says about the run. */
export interface HeaderView {
  state: ViewState;
  run: RunInfo | undefined;
  stopped: StoppedInfo | undefined;
  errorMessage: string;
  totals: ModelTotals;
  /** Samples of the run the page never received (it opened late, past what the host keeps). */
  omittedSamples: number;
}

export function seconds(ms: number): string {
  return ms >= 10000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 1000).toFixed(2)} s`;
}

const STATE_LABEL: Record<ViewState, string> = { idle: 'Not profiling', waiting: 'Waiting for data', live: 'Live', stopped: 'Stopped', error: 'Error' };

/** The statistics text of the header. */
export function statsText(h: HeaderView): string {
  let stats = '';
  if (h.state === 'stopped' && h.stopped) {
    const s = h.stopped.summary;
    stats = `${nf.format(s.sampleCount)} samples in ${seconds(s.duration)}`;
    if (s.errorCount) stats += `, ${nf.format(s.errorCount)} read errors`;
    if (s.droppedSampleCount) stats += `, ${nf.format(s.droppedSampleCount)} dropped`;
    if (s.outputPath) stats += ` — saved to ${s.outputPath}`;
    if (h.stopped.message) stats += ` — ${h.stopped.message}`;
  } else if (h.state === 'error') {
    stats = h.errorMessage;
  } else if (h.state !== 'idle') {
    const t = h.totals;
    const rate = t.duration > 0 ? (t.sampleCount * 1000) / t.duration : 0;
    stats = `${nf.format(t.sampleCount)} samples`;
    if (t.duration > 0) stats += ` · ${rate.toFixed(rate >= 100 ? 0 : 1)} samples/s over ${seconds(t.duration)}`;
    if (t.droppedSampleCount) stats += ` · ${nf.format(t.droppedSampleCount)} dropped`;
    if (t.errorCount) stats += ` · ${nf.format(t.errorCount)} read errors`;
  }
  if (h.omittedSamples > 0 && h.state !== 'idle' && h.state !== 'error') stats += ` · the first ${nf.format(h.omittedSamples)} samples are not shown (the panel opened late; an export has them)`;
  return stats;
}

/** The message over the graph, or '' when the graph speaks for itself. */
export function overlayText(state: ViewState, total: number, oneThread: boolean, idleMessage: string, errorMessage: string): string {
  if (state === 'idle') return idleMessage;
  if (state === 'waiting') return 'Waiting for profiling data…';
  if (state === 'error' && total === 0) return errorMessage;
  if (total === 0) return oneThread ? 'No samples in this thread.' : 'No samples.';
  return '';
}

export class Toolbar {
  readonly element: HTMLElement;
  readonly searchEl: HTMLInputElement;
  readonly resetEl: HTMLButtonElement;
  private readonly stateEl = el('span', { className: 'state', id: 'state' });
  private readonly statsEl = el('span', { className: 'stats', id: 'stats' });
  /** Which path the run came from (RunInfo.path), so that two runs of one program are told apart. */
  private readonly pathEl = el('span', { className: 'run-path', id: 'run-path' });
  readonly matchEl = el('span', { className: 'match', id: 'match' });
  private readonly threadEl: HTMLSelectElement;
  private readonly groupEl: HTMLSelectElement;
  private readonly debuggerEl: HTMLInputElement;
  readonly byTaskEl: HTMLInputElement;
  readonly waitingEl: HTMLInputElement;
  private readonly waitingLabel: HTMLLabelElement;
  private readonly byTaskLabel: HTMLLabelElement;
  private baselineShown = -1;
  readonly baselineEl = el('select', { id: 'baseline', title: 'Compare with an earlier run: a differential flame graph' });
  private threadsShown = '';

  constructor(initial: { groupBy: GroupBy; hideDebugger: boolean; byTask: boolean; waitingTasks: boolean }, events: ToolbarEvents) {
    this.searchEl = el('input', { type: 'search', id: 'search', placeholder: 'Search (Ctrl+F)', spellcheck: false });
    this.searchEl.setAttribute('aria-label', 'Search functions and files');
    this.threadEl = el('select', { id: 'thread', title: 'Thread' });
    this.threadEl.setAttribute('aria-label', 'Thread');
    this.groupEl = el(
      'select',
      { id: 'group', title: 'Group by' },
      el('option', { value: 'function', textContent: 'By function' }),
      el('option', { value: 'line', textContent: 'By line' }),
    );
    this.groupEl.setAttribute('aria-label', 'Group by');
    this.groupEl.value = initial.groupBy;
    this.debuggerEl = el('input', { type: 'checkbox', id: 'hide-debugger', checked: initial.hideDebugger });
    const debuggerLabel = el(
      'label',
      { className: 'check', title: "Hide debugpy's frames: each stack starts below the debugger's last frame; samples taken in the debugger itself show as (debugger)" },
      this.debuggerEl,
      'Hide debugger',
    );
    this.byTaskEl = el('input', { type: 'checkbox', id: 'by-task', checked: initial.byTask });
    // Both shown by showTaskToggles for a run sampled by task.
    const byTaskLabel = (this.byTaskLabel = el('label', { className: 'check', title: BY_TASK_TITLE, hidden: true }, this.byTaskEl, 'By task'));
    // Enabled by showWaitingTasks when the run samples waiting tasks.
    this.waitingEl = el('input', { type: 'checkbox', id: 'waiting-tasks', checked: initial.waitingTasks, disabled: true, title: WAITING_UNAVAILABLE_TITLE });
    this.waitingLabel = el('label', { className: 'check', title: WAITING_UNAVAILABLE_TITLE, hidden: true }, this.waitingEl, 'Waiting tasks');
    this.resetEl = el('button', { id: 'reset', textContent: 'Reset zoom', title: 'Reset zoom (Escape)' });
    this.element = el(
      'header',
      { className: 'toolbar' },
      this.stateEl,
      this.statsEl,
      this.pathEl,
      el('span', { className: 'spacer' }),
      this.searchEl,
      this.matchEl,
      this.threadEl,
      this.groupEl,
      debuggerLabel,
      byTaskLabel,
      this.waitingLabel,
      this.baselineEl,
      this.resetEl,
    );

    this.searchEl.addEventListener('input', () => events.search(this.searchEl.value));
    this.searchEl.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        if (this.searchEl.value) events.search('');
        else this.searchEl.blur();
      }
    });
    this.threadEl.addEventListener('change', () => events.thread(this.threadEl.value === 'all' ? undefined : Number(this.threadEl.value)));
    this.groupEl.addEventListener('change', () => events.groupBy(this.groupEl.value as GroupBy));
    this.debuggerEl.addEventListener('change', () => events.hideDebugger(this.debuggerEl.checked));
    this.byTaskEl.addEventListener('change', () => events.byTask(this.byTaskEl.checked));
    this.waitingEl.addEventListener('change', () => events.waitingTasks(this.waitingEl.checked));
    this.resetEl.addEventListener('click', () => events.resetZoom());
    this.baselineEl.setAttribute('aria-label', 'Baseline to compare with');
    this.showBaselines([], -1);
    this.baselineEl.addEventListener('change', () => {
      const value = Number(this.baselineEl.value);
      if (value !== PICK_FILE) return events.baseline(value);
      // The choice stays what it was until a file has been read (then showBaselines names it).
      this.baselineEl.value = String(this.baselineShown);
      events.pickBaselineFile();
    });
  }

  showSearch(q: string): void {
    if (this.searchEl.value !== q) this.searchEl.value = q;
  }
  showThread(thread: number | undefined): void {
    this.threadEl.value = thread === undefined ? 'all' : String(thread);
  }
  showGroupBy(g: GroupBy): void {
    this.groupEl.value = g;
  }
  showHideDebugger(hide: boolean): void {
    this.debuggerEl.checked = hide;
  }
  showByTask(on: boolean): void {
    this.byTaskEl.checked = on;
  }
  /** Shows "By task" and "Waiting tasks" (for a run sampled by task, or whose frames hold tasks), or hides them. */
  showTaskToggles(visible: boolean): void {
    if (this.byTaskLabel.hidden !== visible) return;
    this.byTaskLabel.hidden = !visible;
    this.waitingLabel.hidden = !visible;
    // Two more controls: the toolbar takes two rows sooner (webview.css).
    this.element.classList.toggle('with-tasks', visible);
  }

  /** "Waiting tasks": `on`, and enabled only when the run samples waiting tasks (`available`). */
  showWaitingTasks(on: boolean, available: boolean): void {
    this.waitingEl.checked = on;
    if (this.waitingEl.disabled !== !available) {
      this.waitingEl.disabled = !available;
      const title = available ? WAITING_TITLE : WAITING_UNAVAILABLE_TITLE;
      this.waitingEl.title = title;
      this.waitingLabel.title = title;
      this.waitingLabel.classList.toggle('disabled', !available);
    }
  }

  /**
   * The baseline choices: "No baseline", the earlier runs (newest first), the file last compared
   * with (`fileLabel`), and one that asks for a file; `current` picked.
   */
  showBaselines(labels: string[], current: number, fileLabel?: string): void {
    const opts = [el('option', { value: '-1', textContent: 'No baseline' })];
    for (let i = labels.length - 1; i >= 0; i--) opts.push(el('option', { value: String(i), textContent: `vs ${labels[i]}` }));
    if (fileLabel !== undefined) opts.push(el('option', { value: String(FILE_BASELINE), textContent: `vs ${fileLabel}` }));
    opts.push(el('option', { value: String(PICK_FILE), textContent: 'Compare with a file\u2026' }));
    this.baselineEl.replaceChildren(...opts);
    this.baselineEl.value = String(current);
    this.baselineShown = current;
  }

  /** Forgets the thread list, so that the next refresh rebuilds it. */
  clearThreads(): void {
    this.threadsShown = '';
  }

  /** The thread choices, rebuilt only when a thread or a name changed. */
  refreshThreads(list: Array<{ id: number; info?: ThreadInfo }>, current: number | undefined, processes: ReadonlyArray<{ pid: number; key: number; commandLine?: string; threads: number[] }> = []): void {
    const sig = `${list.map((t) => `${t.id}:${t.info?.name ?? ''}`).join('|')}/${processes.map((p) => `${p.pid}:${p.commandLine ?? ''}:${p.threads.join(',')}`).join('|')}`;
    if (sig === this.threadsShown) return;
    this.threadsShown = sig;
    const opts: HTMLElement[] = [el('option', { value: 'all', textContent: 'All threads' })];
    const option = (t: { id: number; info?: ThreadInfo }, indent: string) => el('option', { value: String(t.id), textContent: indent + threadLabel(t.id, t.info) });
    if (processes.length === 0) {
      for (const t of list) opts.push(option(t, ''));
    } else {
      // A run over several processes: each process (all its threads), then its threads under it.
      const byId = new Map(list.map((t) => [t.id, t]));
      const placed = new Set<number>();
      for (const p of processes) {
        const threads = p.threads.length === 1 ? 'its thread' : `its ${p.threads.length} threads`;
        opts.push(el('option', { value: String(p.key), textContent: `${threadLabel(p.key, undefined, p.commandLine)}: ${threads}` }));
        for (const id of p.threads) {
          const t = byId.get(id);
          if (t === undefined) continue;
          opts.push(option(t, '\u2003'));
          placed.add(id);
        }
      }
      for (const t of list) if (!placed.has(t.id)) opts.push(option(t, ''));
    }
    this.threadEl.replaceChildren(...opts);
    this.showThread(current);
    if (this.threadEl.value === '') this.threadEl.value = 'all';
  }

  updateHeader(h: HeaderView): void {
    this.stateEl.dataset.state = h.state;
    this.stateEl.textContent = STATE_LABEL[h.state];
    if (h.run && h.state !== 'idle') {
      const who = [h.run.session, h.run.pid ? `pid ${h.run.pid}` : '', h.run.pythonVersion ? `Python ${h.run.pythonVersion}` : ''].filter(Boolean).join(', ');
      this.statsEl.dataset.who = who;
    }
    const path = h.run?.path && h.state !== 'idle' ? h.run.path : undefined;
    this.pathEl.dataset.path = path ?? '';
    this.pathEl.textContent = path ? RUN_PATH_LABEL[path] : '';
    const text = statsText(h);
    this.statsEl.textContent = text;
    // Cut with an ellipsis when the toolbar is narrow: the whole text on hover.
    this.statsEl.title = [text, this.statsEl.dataset.who].filter(Boolean).join('\n');
  }
}
