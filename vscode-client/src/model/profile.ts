// The profile model: the frame map of a profiling run, and the call trees and per-function
// statistics aggregated incrementally from profilingData batches. Plain TypeScript without DOM or
// VS Code dependencies: the webview aggregates with it, the extension host too for the editor's line
// heat (extension/line-heat.ts), and node tests it.
//
// Cost: adding a batch costs a hash of each sample's frame IDs and a counter increment (stacks.ts);
// the trees and counters are brought up to date when read, once per distinct stack of the samples
// since the last read (O(distinct stacks x depth)). No operation re-reads earlier samples (they
// are not kept). Switching to function grouping builds those trees once from the line trees
// (O(nodes)), another view (hiding the debugger's frames, by task, without waiting tasks: views.ts)
// builds its trees from the stack records (O(distinct stacks x depth)); after which they are
// maintained incrementally too.

import { Aggregate, GroupBy, processKey, processOfKey, ThreadView } from './aggregate';
import { CallNode, CallTree } from './calltree';
import type { Frame, ProfilingDataBody, TaskState, ThreadInfo } from './protocol';
import { StackTable } from './stacks';
import { Timeline, TimeRange } from './timeline';
import { frameKindOf, IN_DEBUGGER, SKIP, ViewOptions, viewMask, viewSlice } from './views';

export { CallNode, CallTree, processKey, processOfKey, ThreadView, Timeline };
export type { TimeRange };
export type { ViewOptions, WaitingFilter } from './views';
export type { GroupBy };

/** Thread key used for samples whose event carries no threadIds. */
export const UNKNOWN_THREAD = -1;

/** What a tree node stands for: a frame (group by line) or a function (group by function). */
export interface KeyInfo {
  function: string;
  file: string;
  /** Line of the frame; for a function, the smallest non-zero line seen in it. */
  line: number;
  native: boolean;
  module?: string;
  /** An asyncio task's frame: the task's state at the samples (`function` is the task's name). */
  task?: TaskState;
}

export interface ModelTotals {
  sampleCount: number;
  duration: number;
  droppedSampleCount: number;
  errorCount: number;
  batches: number;
  unknownFrameRefs: number;
}

export interface TableRow {
  key: number;
  info: KeyInfo;
  self: number;
  total: number;
}

/** The node that stands for samples taken in the debugger's own code, when its frames are hidden. */
export const DEBUGGER_FUNCTION = '(debugger)';

export class ProfileModel {
  /** frame ID -> dense frame index */
  private readonly frameIndex = new Map<number, number>();
  readonly frameIds: number[] = [];
  readonly frames: Frame[] = [];
  /** frame index -> function index */
  private readonly frameFunc: number[] = [];
  private readonly funcIndex = new Map<string, number>();
  readonly funcs: KeyInfo[] = [];
  readonly lineInfos: KeyInfo[] = [];
  readonly threads = new Map<number, ThreadInfo>();
  /** Processes announced (a run with subprocesses): pid -> command line, and whether it ended. */
  readonly processes = new Map<number, { commandLine: string; exited?: boolean }>();
  /** stack ID -> frame IDs, root first (a run started with `stacks`) */
  private readonly stackDefs = new Map<number, readonly number[]>();
  /** frame index -> its kind (views.ts: the program's, the debugger's, native, a task's) */
  private readonly frameKind: number[] = [];

  /** Every distinct stack of each thread, with its samples. */
  private readonly stacks = new StackTable();
  /** A thread key's process, 0 when unknown. */
  private readonly pidOf = (tid: number): number => this.threads.get(tid)?.pid ?? 0;
  /** The stacks as sampled. */
  private readonly full = new Aggregate(this.frameFunc, this.stacks, this.stacks, this.pidOf);
  /**
   * The other views in use, by viewMask (views.ts): without the debugger (what lies below the last
   * debugger frame of each stack, or the one node DEBUGGER_FUNCTION for a sample taken in the
   * debugger itself), by task, without or with only the waiting tasks' samples. Each built on
   * first use from the stack records, maintained incrementally after.
   */
  private readonly derived = new Map<number, Aggregate>();
  /** Samples over time, by stack record (timeline.ts). */
  readonly timeline = new Timeline(undefined, undefined, this.pidOf);
  /** When set, trees and tables hold only the samples of the timeline's buckets in this range. */
  private range: TimeRange | null = null;
  /** The aggregates of the range, rebuilt from the timeline when the range or the data changed. */
  private ranged: { serial: number; width: number; first: number; end: number; byMask: Map<number, Aggregate> } | null = null;

  readonly totals: ModelTotals = {
    sampleCount: 0,
    duration: 0,
    droppedSampleCount: 0,
    errorCount: 0,
    batches: 0,
    unknownFrameRefs: 0,
  };
  /** Incremented on every change; views redraw when it moved. */
  version = 0;
  /** Some frame is an asyncio task's (the run sampled by task). */
  hasTasks = false;

  /** The one-node stack of a sample taken in the debugger itself: DEBUGGER_FUNCTION. */
  private readonly debuggerLine = new Int32Array(1);
  private readonly debuggerFunc = new Int32Array(1);
  private debuggerKeyDefined = false;

  /** All threads, as sampled (its line tree up to date; read the others through tree()). */
  get all(): ThreadView {
    this.sync();
    this.full.tree('line');
    return this.full.all;
  }

  /** Each thread, as sampled (sample counts up to date; read the trees through tree()). */
  get byThread(): ReadonlyMap<number, ThreadView> {
    this.sync();
    return this.full.byThread;
  }

  /** A model of a run's profilingData bodies, in the order they were sent. */
  static of(bodies: readonly ProfilingDataBody[]): ProfileModel {
    const model = new ProfileModel();
    for (const b of bodies) model.addBatch(b);
    return model;
  }

  /** Adds one profilingData event body, with frame IDs per sample or (`stacks`) stack IDs. */
  addBatch(body: ProfilingDataBody): void {
    for (const id in body.newFrames) this.defineFrame(Number(id), body.newFrames[id]);
    if (body.newStacks) for (const id in body.newStacks) this.stackDefs.set(Number(id), body.newStacks[id]);
    if (body.threads) for (const id in body.threads) this.threads.set(Number(id), body.threads[id]);
    // Each announcement is whole: one without `exited` after an end is the program the process exec'd.
    if (body.processes) for (const pid in body.processes) this.processes.set(Number(pid), { ...body.processes[pid] });
    const samples = body.samples;
    const stackIds = body.stackIds ?? [];
    const counts = body.stackCounts ?? [];
    const threadIds = body.threadIds;
    const entries = body.stackIds !== undefined ? stackIds.length : samples.length;
    const tids = threadIds !== undefined && threadIds.length === entries ? threadIds : undefined;
    let added = samples.length;
    const recs = new Int32Array(entries), threadKeys = new Float64Array(entries), weights = new Float64Array(entries);
    for (let i = 0; i < samples.length; i++) {
      const tid = tids === undefined ? UNKNOWN_THREAD : tids[i];
      recs[i] = this.addSample(samples[i], tid, 1);
      threadKeys[i] = tid;
      weights[i] = 1;
    }
    for (let i = 0; i < stackIds.length; i++) {
      const weight = counts[i] ?? 1;
      let stack = this.stackDefs.get(stackIds[i]);
      if (stack === undefined) {
        // Never announced: counted like an unknown frame, shown as one.
        this.totals.unknownFrameRefs++;
        stack = NO_FRAMES;
      }
      const tid = tids === undefined ? UNKNOWN_THREAD : tids[i];
      recs[i] = this.addSample(stack, tid, weight);
      threadKeys[i] = tid;
      weights[i] = weight;
      added += weight;
    }
    this.timeline.addEvent(body.startTime, body.endTime, recs, threadKeys, weights);
    const t = this.totals;
    t.sampleCount += added;
    t.duration += body.duration;
    t.droppedSampleCount += body.droppedSampleCount ?? 0;
    t.errorCount += body.errorCount ?? 0;
    t.batches++;
    this.version++;
  }

  /** The view for a thread key, or all threads for undefined (as sampled; its sample count up to date, its trees through tree()). */
  view(thread?: number): ThreadView | undefined {
    this.sync();
    return this.full.view(thread);
  }

  /** The tree of a thread (all for undefined) in a grouping and a view (true: the debugger hidden). */
  tree(groupBy: GroupBy, thread?: number, view: boolean | ViewOptions = false): CallTree | undefined {
    return this.aggregate(viewMask(view)).tree(groupBy, thread);
  }

  /** The samples a view of a thread (all for undefined) holds: what its shares are of. */
  sampleCount(thread: number | undefined, view: boolean | ViewOptions = false): number {
    return this.aggregate(viewMask(view)).view(thread)?.sampleCount ?? 0;
  }

  /** Limits the trees and tables to the samples of a time range (null: the whole run). */
  setRange(range: TimeRange | null): void {
    if (range?.start === this.range?.start && range?.end === this.range?.end) return;
    this.range = range === null ? null : { ...range };
    this.ranged = null;
    this.version++;
  }

  get timeRange(): TimeRange | null {
    return this.range;
  }

  /** The function key of a frame (line) key. */
  functionOfFrame(frameKey: number): number {
    return this.frameFunc[frameKey];
  }

  keyInfo(groupBy: GroupBy, key: number): KeyInfo {
    return groupBy === 'line' ? this.lineInfos[key] : this.funcs[key];
  }

  /** Threads seen in samples, with their sample counts, most samples first. */
  threadList(): Array<{ id: number; info?: ThreadInfo; samples: number }> {
    return [...this.byThread]
      .map(([id, v]) => ({ id, info: this.threads.get(id), samples: v.sampleCount }))
      .sort((a, b) => b.samples - a.samples || a.id - b.id);
  }

  /**
   * The processes of the threads sampled, most samples first, each with its threads (ids, most
   * samples first); empty unless more than one process was sampled (a run with subprocesses).
   */
  processList(): Array<{ pid: number; key: number; commandLine?: string; samples: number; threads: number[] }> {
    const byPid = new Map<number, { pid: number; key: number; commandLine?: string; samples: number; threads: number[] }>();
    for (const t of this.threadList()) {
      const pid = t.info?.pid ?? 0;
      if (pid <= 0) continue;
      let p = byPid.get(pid);
      if (p === undefined) byPid.set(pid, (p = { pid, key: processKey(pid), commandLine: this.processes.get(pid)?.commandLine, samples: 0, threads: [] }));
      p.samples += t.samples;
      p.threads.push(t.id);
    }
    if (byPid.size < 2) return [];
    return [...byPid.values()].sort((a, b) => b.samples - a.samples || a.pid - b.pid);
  }

  /** Per-key self and total samples of a view, sorted by `sortBy` (then total, self). */
  table(groupBy: GroupBy, thread: number | undefined, sortBy: 'self' | 'total', limit = Infinity, view: boolean | ViewOptions = false): TableRow[] {
    const v = this.aggregate(viewMask(view)).stats(thread, this.frames.length, this.funcs.length);
    if (v === undefined) return [];
    const stats = groupBy === 'line' ? v.lineStats : v.funcStats;
    const n = Math.min(groupBy === 'line' ? this.lineInfos.length : this.funcs.length, stats.total.length);
    const rows: TableRow[] = [];
    for (let k = 0; k < n; k++) {
      const total = stats.total[k];
      if (total > 0) rows.push({ key: k, info: this.keyInfo(groupBy, k), self: stats.self[k], total });
    }
    const other = sortBy === 'self' ? 'total' : 'self';
    rows.sort((a, b) => b[sortBy] - a[sortBy] || b[other] - a[other] || a.key - b.key);
    return rows.length > limit ? rows.slice(0, limit) : rows;
  }

  // ---------------------------------------------------------------------------------------------

  /** The aggregate of a view (its viewMask), up to date. */
  private aggregate(mask: number): Aggregate {
    this.sync();
    if (this.range !== null) return this.rangeAggregate(mask);
    if (mask === 0) return this.full;
    let into = this.derived.get(mask);
    if (into === undefined) {
      this.derived.set(mask, (into = this.newDerived()));
      // Every sample so far is in the records' counts (none is pending after the sync).
      const st = this.stacks;
      for (let rec = 0; rec < st.size; rec++) if (st.count[rec] > 0) this.addDerived(into, mask, rec, st.count[rec]);
    }
    return into;
  }

  private newDerived(): Aggregate {
    if (!this.debuggerKeyDefined) {
      this.debuggerKeyDefined = true;
      const key = this.defineKey(-1, { file: '', line: 0, function: DEBUGGER_FUNCTION });
      this.debuggerLine[0] = key;
      this.debuggerFunc[0] = this.frameFunc[key];
    }
    return new Aggregate(this.frameFunc, this.stacks, { line: this.debuggerLine, func: this.debuggerFunc }, this.pidOf);
  }

  /**
   * The aggregate of the samples in the range, built from the timeline's buckets (once per
   * distinct stack of each bucket) when they changed since the last build: a live run's new
   * samples past the range cost nothing.
   */
  private rangeAggregate(mask: number): Aggregate {
    const tl = this.timeline;
    const [first, end] = tl.bucketsIn(this.range!);
    let r = this.ranged;
    if (r === null || r.width !== tl.width || r.first !== first || r.end !== end || tl.changedSince(first, end, r.serial))
      r = this.ranged = { serial: tl.serial, width: tl.width, first, end, byMask: new Map() };
    const built = r.byMask.get(mask);
    if (built !== undefined) return built;
    const into = mask === 0 ? new Aggregate(this.frameFunc, this.stacks, this.stacks, this.pidOf) : this.newDerived();
    for (let b = first; b < end; b++) tl.forEachRec(b, (rec, w) => this.addDerived(into, mask, rec, w));
    r.byMask.set(mask, into);
    return into;
  }

  /** Gives the samples counted since the last read to the aggregates (which take them in when read). */
  private sync(): void {
    const st = this.stacks;
    st.deltas.drain((rec, weight) => {
      const start = st.start[rec];
      this.full.count(rec, start, start + st.length[rec], false, st.tid[rec], weight);
      for (const [mask, into] of this.derived) this.addDerived(into, mask, rec, weight);
    });
  }

  private defineFrame(id: number, frame: Frame): void {
    if (this.frameIndex.has(id)) return; // IDs are never redefined within a run
    this.frameIndex.set(id, this.defineKey(id, frame));
  }

  /** Adds a frame key (and its function's key if new); returns the frame key. */
  private defineKey(id: number, frame: Frame): number {
    const idx = this.frames.length;
    this.frameIds.push(id);
    this.frames.push(frame);
    const native = frame.native === true;
    // The daemon classifies frames once (origin, task); the client never guesses from paths.
    this.frameKind.push(frameKindOf(frame));
    const task = frame.task;
    if (task !== undefined) this.hasTasks = true;
    this.lineInfos.push({ function: frame.function, file: frame.file, line: frame.line, native, module: frame.module, ...(task ? { task } : {}) });
    // A task is a function of its own per state (its state is part of its frames' identity), apart
    // from any frame of the same name.
    const fkey = task ? `t\0${task}\0${frame.function}` : `${native ? 'n' : 'p'}\0${frame.file}\0${frame.function}\0${native ? frame.module ?? '' : ''}`;
    let f = this.funcIndex.get(fkey);
    if (f === undefined) {
      f = this.funcs.length;
      this.funcIndex.set(fkey, f);
      this.funcs.push({ function: frame.function, file: frame.file, line: frame.line, native, module: frame.module, ...(task ? { task } : {}) });
    } else {
      const info = this.funcs[f];
      if (frame.line > 0 && (info.line === 0 || frame.line < info.line)) info.line = frame.line;
    }
    this.frameFunc.push(f);
    return idx;
  }

  private unknownFrame(id: number): number {
    // A sample referencing a frame never announced violates the protocol; show it rather than
    // dropping the sample, so that totals stay right.
    this.totals.unknownFrameRefs++;
    this.defineFrame(id, { file: '', line: 0, function: `<unknown frame ${id}>` });
    return this.frameIndex.get(id)!;
  }

  /** Counts `weight` samples of a stack (frame IDs, root first) of a thread. */
  private addSample(ids: readonly number[], tid: number, weight: number): number {
    const st = this.stacks;
    const rec = st.intern(tid, ids);
    if (st.created) {
      // A new stack: its frame and function keys, looked up once for all its samples.
      const o = st.start[rec];
      for (let i = 0; i < ids.length; i++) {
        let idx = this.frameIndex.get(ids[i]);
        if (idx === undefined) idx = this.unknownFrame(ids[i]);
        st.line[o + i] = idx;
        st.func[o + i] = this.frameFunc[idx];
      }
    }
    st.addSamples(rec, weight);
    return rec;
  }

  /** Adds samples of a stack record to the aggregate of a view (viewMask): the part of the stack the view shows, if any. */
  private addDerived(into: Aggregate, mask: number, rec: number, weight: number): void {
    const st = this.stacks;
    const start = mask === 0 ? st.start[rec] : viewSlice(mask, st, this.frameKind, rec);
    if (start === SKIP) return;
    if (start === IN_DEBUGGER) into.count(rec, 0, 1, true, st.tid[rec], weight);
    else into.count(rec, start, st.start[rec] + st.length[rec], false, st.tid[rec], weight);
  }
}

const NO_FRAMES: readonly number[] = [];

/** Display name of a thread (or of a process, for a process key). */
export function threadLabel(id: number, info?: ThreadInfo, commandLine?: string): string {
  if (id === UNKNOWN_THREAD) return 'unknown thread';
  const pid = processOfKey(id);
  if (pid !== undefined) return processLabel(pid, commandLine);
  const name = info?.name ? info.name : 'thread';
  return `${name} (${id})`;
}

/** "process 4242 (python worker.py)": the command line shortened to its program and first arguments. */
export function processLabel(pid: number, commandLine?: string): string {
  if (!commandLine) return `process ${pid}`;
  const words = commandLine.split(' ').filter((w) => w !== '');
  const shown = words.map((w, i) => (i === 0 || w.includes('/') ? basename(w) : w)).join(' ');
  return `process ${pid} (${shown.length > 48 ? `${shown.slice(0, 47)}…` : shown})`;
}

/** "file:line" of a key, or the native module. */
export function locationLabel(info: KeyInfo): string {
  if (info.native) {
    const mod = info.module ? basename(info.module) : 'native';
    return info.file ? `${info.file}${info.line > 0 ? `:${info.line}` : ''} [${mod}]` : `[${mod}]`;
  }
  if (info.task !== undefined) return `asyncio task · ${info.task}`;
  if (!info.file && info.function === DEBUGGER_FUNCTION) return 'debugpy and pydevd';
  return info.line > 0 ? `${info.file}:${info.line}` : info.file;
}

export function basename(p: string): string {
  const i = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  return i >= 0 ? p.slice(i + 1) : p;
}
