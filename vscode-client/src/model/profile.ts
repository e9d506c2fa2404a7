// The profile model: the frame map of a profiling run, and the call trees and per-function
// statistics aggregated incrementally from profilingData batches. Plain TypeScript without DOM or
// VS Code dependencies: the webview and the extension host both use it, and node tests it.
//
// Cost: adding a batch costs O(samples x depth) of that batch only; no operation re-reads earlier
// samples (they are not kept). Switching to function grouping builds the function trees once from
// the line trees (O(nodes)), after which they are maintained incrementally too.

import type { Frame, ProfilingDataBody, ThreadInfo } from './protocol';

export type GroupBy = 'function' | 'line';

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
}

export class CallNode {
  total = 0;
  self = 0;
  children: Map<number, CallNode> | null = null;
  /** Children in display order (by name), cached; invalidated when a child is added. */
  private ordered: CallNode[] | null = null;

  constructor(
    readonly key: number,
    readonly parent: CallNode | null,
    readonly depth: number,
  ) {}

  child(key: number): CallNode | undefined {
    return this.children?.get(key);
  }

  /** Returns the child for key, creating it. `created` is set when a node was added. */
  childOrCreate(key: number, onCreate: () => void): CallNode {
    let map = this.children;
    if (map === null) map = this.children = new Map();
    let c = map.get(key);
    if (c === undefined) {
      c = new CallNode(key, this, this.depth + 1);
      map.set(key, c);
      this.ordered = null;
      onCreate();
    }
    return c;
  }

  /** Children ordered for display; `compare` must be stable for a given tree. */
  orderedChildren(compare: (a: CallNode, b: CallNode) => number): CallNode[] {
    if (this.children === null) return EMPTY;
    if (this.ordered === null) this.ordered = [...this.children.values()].sort(compare);
    return this.ordered;
  }

  /** Path of keys from the root's child to this node. */
  path(): number[] {
    const keys: number[] = [];
    for (let n: CallNode | null = this; n !== null && n.parent !== null; n = n.parent) keys.push(n.key);
    return keys.reverse();
  }
}

const EMPTY: CallNode[] = [];

export class CallTree {
  readonly root = new CallNode(-1, null, 0);
  nodeCount = 1;
  maxDepth = 0;
  private readonly created = () => {
    this.nodeCount++;
  };

  insert(keys: ArrayLike<number>, length: number, weight: number): void {
    let node = this.root;
    node.total += weight;
    for (let i = 0; i < length; i++) {
      node = node.childOrCreate(keys[i], this.created);
      node.total += weight;
    }
    node.self += weight;
    if (length > this.maxDepth) this.maxDepth = length;
  }

  /** The node at a path of keys, if present. */
  find(path: readonly number[]): CallNode | undefined {
    let node: CallNode | undefined = this.root;
    for (const k of path) {
      node = node.child(k);
      if (node === undefined) return undefined;
    }
    return node;
  }
}

/** Self and total samples per key (function or frame), for the table view. */
export class KeyStats {
  self: Float64Array = new Float64Array(64);
  total: Float64Array = new Float64Array(64);

  ensure(n: number): void {
    if (n <= this.self.length) return;
    let len = this.self.length;
    while (len < n) len *= 2;
    const s = new Float64Array(len);
    s.set(this.self);
    const t = new Float64Array(len);
    t.set(this.total);
    this.self = s;
    this.total = t;
  }
}

/** One view of the data: all threads, or one thread. */
export class ThreadView {
  readonly lineTree = new CallTree();
  funcTree: CallTree | null = null;
  readonly lineStats = new KeyStats();
  readonly funcStats = new KeyStats();
  sampleCount = 0;
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

/** A compact replay of a model, used when a view opens while a run is in progress. */
export interface ProfileSnapshot {
  frames: Record<string, Frame>;
  threads: Record<string, ThreadInfo>;
  /** [thread key, root-first frame IDs, number of samples] */
  stacks: Array<[number, number[], number]>;
  totals: ModelTotals;
}

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

  readonly all = new ThreadView();
  readonly byThread = new Map<number, ThreadView>();
  private funcTreesEnabled = false;

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

  private scratchLine = new Int32Array(256);
  private scratchFunc = new Int32Array(256);
  private lineStamp: Float64Array = new Float64Array(64);
  private funcStamp: Float64Array = new Float64Array(64);
  private stampSerial = 0;

  /** Adds one profilingData event body. */
  addBatch(body: ProfilingDataBody): void {
    for (const id in body.newFrames) this.defineFrame(Number(id), body.newFrames[id]);
    if (body.threads) for (const id in body.threads) this.threads.set(Number(id), body.threads[id]);
    const samples = body.samples;
    const threadIds = body.threadIds;
    const tids = threadIds !== undefined && threadIds.length === samples.length ? threadIds : undefined;
    for (let i = 0; i < samples.length; i++) {
      this.addIds(samples[i], tids === undefined ? UNKNOWN_THREAD : tids[i], 1);
    }
    const t = this.totals;
    t.sampleCount += samples.length;
    t.duration += body.duration;
    t.droppedSampleCount += body.droppedSampleCount ?? 0;
    t.errorCount += body.errorCount ?? 0;
    t.batches++;
    this.version++;
  }

  /** Replays a snapshot taken from another model (of the same run). */
  addSnapshot(s: ProfileSnapshot): void {
    for (const id in s.frames) this.defineFrame(Number(id), s.frames[id]);
    for (const id in s.threads) this.threads.set(Number(id), s.threads[id]);
    for (const [tid, ids, count] of s.stacks) this.addIds(ids, tid, count);
    const t = this.totals;
    t.sampleCount += s.totals.sampleCount;
    t.duration += s.totals.duration;
    t.droppedSampleCount += s.totals.droppedSampleCount;
    t.errorCount += s.totals.errorCount;
    t.batches += s.totals.batches;
    t.unknownFrameRefs += s.totals.unknownFrameRefs;
    this.version++;
  }

  snapshot(): ProfileSnapshot {
    const frames: Record<string, Frame> = {};
    this.frameIds.forEach((id, i) => (frames[String(id)] = this.frames[i]));
    const threads: Record<string, ThreadInfo> = {};
    for (const [id, t] of this.threads) threads[String(id)] = t;
    const stacks: Array<[number, number[], number]> = [];
    for (const [tid, view] of this.byThread) {
      const walk = (node: CallNode, path: number[]) => {
        if (node.self > 0) stacks.push([tid, path.map((i) => this.frameIds[i]), node.self]);
        if (node.children) for (const c of node.children.values()) walk(c, [...path, c.key]);
      };
      walk(view.lineTree.root, []);
    }
    return { frames, threads, stacks, totals: { ...this.totals } };
  }

  /** The view for a thread key, or all threads for undefined. */
  view(thread?: number): ThreadView | undefined {
    return thread === undefined ? this.all : this.byThread.get(thread);
  }

  /** The tree of a view in a grouping; function trees are built on first use. */
  tree(groupBy: GroupBy, thread?: number): CallTree | undefined {
    const v = this.view(thread);
    if (v === undefined) return undefined;
    if (groupBy === 'line') return v.lineTree;
    if (!this.funcTreesEnabled) this.enableFunctionTrees();
    return v.funcTree!;
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

  /** Per-key self and total samples of a view, sorted by `sortBy` (then total, self). */
  table(groupBy: GroupBy, thread: number | undefined, sortBy: 'self' | 'total', limit = Infinity): TableRow[] {
    const v = this.view(thread);
    if (v === undefined) return [];
    const stats = groupBy === 'line' ? v.lineStats : v.funcStats;
    const n = groupBy === 'line' ? this.lineInfos.length : this.funcs.length;
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

  private defineFrame(id: number, frame: Frame): void {
    if (this.frameIndex.has(id)) return; // IDs are never redefined within a run
    const idx = this.frames.length;
    this.frameIndex.set(id, idx);
    this.frameIds.push(id);
    this.frames.push(frame);
    const native = frame.native === true;
    this.lineInfos.push({ function: frame.function, file: frame.file, line: frame.line, native, module: frame.module });
    const fkey = `${native ? 'n' : 'p'}\0${frame.file}\0${frame.function}\0${native ? frame.module ?? '' : ''}`;
    let f = this.funcIndex.get(fkey);
    if (f === undefined) {
      f = this.funcs.length;
      this.funcIndex.set(fkey, f);
      this.funcs.push({ function: frame.function, file: frame.file, line: frame.line, native, module: frame.module });
    } else {
      const info = this.funcs[f];
      if (frame.line > 0 && (info.line === 0 || frame.line < info.line)) info.line = frame.line;
    }
    this.frameFunc.push(f);
    this.all.lineStats.ensure(this.frames.length);
    this.all.funcStats.ensure(this.funcs.length);
    if (this.lineStamp.length < this.frames.length) this.lineStamp = grow(this.lineStamp, this.frames.length);
    if (this.funcStamp.length < this.funcs.length) this.funcStamp = grow(this.funcStamp, this.funcs.length);
  }

  private unknownFrame(id: number): number {
    // A sample referencing a frame never announced violates the protocol; show it rather than
    // dropping the sample, so that totals stay right.
    this.totals.unknownFrameRefs++;
    this.defineFrame(id, { file: '', line: 0, function: `<unknown frame ${id}>` });
    return this.frameIndex.get(id)!;
  }

  private threadView(tid: number): ThreadView {
    let v = this.byThread.get(tid);
    if (v === undefined) {
      v = new ThreadView();
      if (this.funcTreesEnabled) v.funcTree = new CallTree();
      this.byThread.set(tid, v);
    }
    return v;
  }

  private addIds(ids: readonly number[], tid: number, weight: number): void {
    const len = ids.length;
    if (this.scratchLine.length < len) {
      this.scratchLine = new Int32Array(len * 2);
      this.scratchFunc = new Int32Array(len * 2);
    }
    const line = this.scratchLine;
    const func = this.scratchFunc;
    for (let i = 0; i < len; i++) {
      let idx = this.frameIndex.get(ids[i]);
      if (idx === undefined) idx = this.unknownFrame(ids[i]);
      line[i] = idx;
    }
    const fm = this.frameFunc;
    for (let i = 0; i < len; i++) func[i] = fm[line[i]];

    const tv = this.threadView(tid);
    tv.lineStats.ensure(this.frames.length);
    tv.funcStats.ensure(this.funcs.length);
    this.all.lineTree.insert(line, len, weight);
    tv.lineTree.insert(line, len, weight);
    if (this.funcTreesEnabled) {
      this.all.funcTree!.insert(func, len, weight);
      tv.funcTree!.insert(func, len, weight);
    }
    this.all.sampleCount += weight;
    tv.sampleCount += weight;

    // Total counts a key once per sample even when it recurses; self goes to the leaf.
    const serial = ++this.stampSerial;
    const ls = this.lineStamp;
    const fs = this.funcStamp;
    const aL = this.all.lineStats;
    const aF = this.all.funcStats;
    const tL = tv.lineStats;
    const tF = tv.funcStats;
    for (let i = 0; i < len; i++) {
      const l = line[i];
      if (ls[l] !== serial) {
        ls[l] = serial;
        aL.total[l] += weight;
        tL.total[l] += weight;
      }
      const f = func[i];
      if (fs[f] !== serial) {
        fs[f] = serial;
        aF.total[f] += weight;
        tF.total[f] += weight;
      }
    }
    if (len > 0) {
      aL.self[line[len - 1]] += weight;
      tL.self[line[len - 1]] += weight;
      aF.self[func[len - 1]] += weight;
      tF.self[func[len - 1]] += weight;
    }
  }

  private enableFunctionTrees(): void {
    this.funcTreesEnabled = true;
    const build = (v: ThreadView) => {
      const t = new CallTree();
      const fm = this.frameFunc;
      const merge = (from: CallNode, to: CallNode) => {
        to.total += from.total;
        to.self += from.self;
        if (from.children === null) return;
        for (const c of from.children.values()) {
          const target = to.childOrCreate(fm[c.key], () => t.nodeCount++);
          if (target.depth > t.maxDepth) t.maxDepth = target.depth;
          merge(c, target);
        }
      };
      merge(v.lineTree.root, t.root);
      v.funcTree = t;
    };
    build(this.all);
    for (const v of this.byThread.values()) build(v);
  }
}

function grow(a: Float64Array, n: number): Float64Array {
  let len = a.length;
  while (len < n) len *= 2;
  const b = new Float64Array(len);
  b.set(a);
  return b;
}

/** Display name of a thread. */
export function threadLabel(id: number, info?: ThreadInfo): string {
  if (id === UNKNOWN_THREAD) return 'unknown thread';
  const name = info?.name ? info.name : 'thread';
  return `${name} (${id})`;
}

/** "file:line" of a key, or the native module. */
export function locationLabel(info: KeyInfo): string {
  if (info.native) {
    const mod = info.module ? basename(info.module) : 'native';
    return info.file ? `${info.file}${info.line > 0 ? `:${info.line}` : ''} [${mod}]` : `[${mod}]`;
  }
  return info.line > 0 ? `${info.file}:${info.line}` : info.file;
}

export function basename(p: string): string {
  const i = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  return i >= 0 ? p.slice(i + 1) : p;
}
