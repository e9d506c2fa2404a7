// One aggregation of stacks: call trees and per-key counters for all threads, for each thread and
// (once one is asked for) for each process of a run with subprocesses, by line and (once asked
// for) by function. The model keeps one over the stacks as sampled, and
// another over the stacks without the debugger's frames while that view is in use.
//
// Stacks come as records of the model's stack table (stacks.ts) with their new samples. Each tree
// and each view's counters keeps its own pending samples per record, and takes them in when read:
// the panel shows one tree and one table at a time, so the others (other threads, the other
// grouping) cost nothing until shown.

import { CallNode, CallTree, KeyStats } from './calltree';
import { Deltas } from './stacks';

export type GroupBy = 'function' | 'line';

/** The frame and function keys of the records, at the offsets the aggregate is given. */
export interface KeyPools {
  readonly line: Int32Array;
  readonly func: Int32Array;
}

/**
 * Keys below -1 (UNKNOWN_THREAD) stand for a process in place of a thread: all its threads. A
 * process view is built the first time it is read, from the records' counts so far, and kept up to
 * date after, so that a run of one process pays nothing for it.
 */
export function processKey(pid: number): number {
  return -1 - pid;
}

/** The process a key stands for, if it stands for one. */
export function processOfKey(key: number | undefined): number | undefined {
  return key !== undefined && key < -1 ? -1 - key : undefined;
}

/** One view of the data: all threads, one thread, or one process. Its trees and counters are read through the Aggregate, which brings them up to date. */
export class ThreadView {
  readonly lineTree = new CallTree();
  funcTree: CallTree | null = null;
  readonly lineStats = new KeyStats();
  readonly funcStats = new KeyStats();
  /** Samples of the view, always up to date. */
  sampleCount = 0;
  /**
   * The view's records, numbered from 0 in the view (so that what is kept per record of a thread
   * is in proportion to that thread's records): local number -> stack record.
   */
  readonly recs: number[] = [];
  /** By local number: samples not yet in the line tree, the function tree, the counters. */
  readonly lineDeltas = new Deltas();
  readonly funcDeltas = new Deltas();
  readonly statsDeltas = new Deltas();
  /** By local number: the record's leaves in the two trees (the walk up from there is its stack). */
  readonly lineLeaf: CallNode[] = [];
  readonly funcLeaf: CallNode[] = [];
}

export class Aggregate {
  readonly all = new ThreadView();
  readonly byThread = new Map<number, ThreadView>();
  /** By pid: the process views read so far. */
  readonly byProcess = new Map<number, ThreadView>();
  private funcTreesEnabled = false;
  private lineStamp: Float64Array = new Float64Array(64);
  private funcStamp: Float64Array = new Float64Array(64);
  private stampSerial = 0;
  // Per record, learnt the first time it is counted: its thread's view, where its keys are (in
  // `alt` when recAlt is 1, else in `pools`), and its distinct frame and function keys (in `uniq`
  // from uniqStart: uniqLines, then uniqFuncs), so that its samples only bump counters.
  private readonly viewOf: ThreadView[] = [];
  /** Per record: its local number in the all-threads view and in its thread's. */
  private localAll = new Int32Array(256);
  private localThread = new Int32Array(256);
  /** Per record: its thread's process (0 unknown), its local number in that process's view, its samples so far. */
  private recPid = new Int32Array(256);
  private localProcess = new Int32Array(256);
  private recWeight: Float64Array = new Float64Array(256);
  private recStart = new Int32Array(256);
  private recEnd = new Int32Array(256);
  private recAlt = new Uint8Array(256);
  private uniq = new Int32Array(1024);
  private uniqUsed = 0;
  private uniqStart = new Int32Array(256);
  private uniqLines = new Int32Array(256);
  private uniqFuncs = new Int32Array(256);

  /**
   * @param frameFunc frame key -> function key, shared with the model (it grows as frames are
   *   announced)
   * @param pools the records' keys; @param alt other keys a record may be made of
   * @param pidOf a thread key's process, 0 when unknown (read when a record is first counted)
   */
  constructor(
    private readonly frameFunc: readonly number[],
    private readonly pools: KeyPools,
    private readonly alt: KeyPools = pools,
    private readonly pidOf: (tid: number) => number = () => 0,
  ) {}

  /**
   * The view for a thread key (or a process's, processKey), or all threads for undefined (its
   * trees and counters may be behind: read them with tree() and stats()).
   */
  view(thread?: number): ThreadView | undefined {
    if (thread === undefined) return this.all;
    const pid = processOfKey(thread);
    return pid === undefined ? this.byThread.get(thread) : this.processView(pid);
  }

  /** The tree of a view in a grouping, up to date; function trees are built on first use. */
  tree(groupBy: GroupBy, thread?: number): CallTree | undefined {
    const v = this.view(thread);
    if (v === undefined) return undefined;
    if (groupBy === 'line') return this.flushTree(v, v.lineTree, v.lineDeltas, v.lineLeaf, false);
    if (!this.funcTreesEnabled) this.enableFunctionTrees();
    return this.flushTree(v, v.funcTree!, v.funcDeltas, v.funcLeaf, true);
  }

  /** A view with its counters up to date. */
  stats(thread: number | undefined, frames: number, funcs: number): ThreadView | undefined {
    const v = this.view(thread);
    if (v === undefined) return undefined;
    v.lineStats.ensure(frames);
    v.funcStats.ensure(funcs);
    const u = this.uniq;
    const total = v.lineStats.total, self = v.lineStats.self, ftotal = v.funcStats.total, fself = v.funcStats.self;
    v.statsDeltas.drain((local, weight) => {
      const rec = v.recs[local];
      // Total counts a key once per sample even when it recurses; self goes to the leaf.
      let i = this.uniqStart[rec];
      for (const e = i + this.uniqLines[rec]; i < e; i++) total[u[i]] += weight;
      for (const e = i + this.uniqFuncs[rec]; i < e; i++) ftotal[u[i]] += weight;
      const end = this.recEnd[rec];
      if (end > this.recStart[rec]) {
        const keys = this.recAlt[rec] ? this.alt : this.pools;
        self[keys.line[end - 1]] += weight;
        fself[keys.func[end - 1]] += weight;
      }
    });
    return v;
  }

  /**
   * Counts `weight` samples of stack record `rec`: its keys in [start, end) of the pools (or of
   * `alt`), root first. A record always comes with the same stack and thread.
   */
  count(rec: number, start: number, end: number, alt: boolean, tid: number, weight: number): void {
    let tv = this.viewOf[rec];
    if (tv === undefined) tv = this.learn(rec, start, end, alt, tid);
    this.all.sampleCount += weight;
    tv.sampleCount += weight;
    this.pend(this.all, this.localAll[rec], weight);
    this.pend(tv, this.localThread[rec], weight);
    this.recWeight[rec] += weight;
    if (this.byProcess.size > 0) {
      const pv = this.byProcess.get(this.recPid[rec]);
      if (pv !== undefined) {
        pv.sampleCount += weight;
        this.pend(pv, this.localProcess[rec], weight);
      }
    }
  }

  /** A process's view, built from the records so far the first time. */
  private processView(pid: number): ThreadView {
    let v = this.byProcess.get(pid);
    if (v !== undefined) return v;
    v = new ThreadView();
    if (this.funcTreesEnabled) v.funcTree = new CallTree();
    this.byProcess.set(pid, v);
    for (const rec of this.all.recs) {
      if (this.recPid[rec] !== pid) continue;
      const local = (this.localProcess[rec] = v.recs.push(rec) - 1);
      const w = this.recWeight[rec];
      if (w > 0) {
        v.sampleCount += w;
        this.pend(v, local, w);
      }
    }
    return v;
  }

  private pend(v: ThreadView, local: number, weight: number): void {
    v.lineDeltas.add(local, weight);
    if (this.funcTreesEnabled) v.funcDeltas.add(local, weight);
    v.statsDeltas.add(local, weight);
  }

  /**
   * Adds a tree's pending samples: walking up from each record's leaf, or, when that would visit
   * more nodes than the tree has, adding to the leaves and recomputing every total after.
   */
  private flushTree(v: ThreadView, tree: CallTree, deltas: Deltas, leaves: CallNode[], byFunc: boolean): CallTree {
    if (deltas.dirtyCount === 0) return tree;
    const recs = v.recs;
    let walk = 0;
    for (let k = 0; k < deltas.dirtyCount; k++) {
      const rec = recs[deltas.dirty[k]];
      walk += this.recEnd[rec] - this.recStart[rec] + 1;
    }
    const recompute = walk > 2 * tree.nodeCount;
    deltas.drain((local, weight) => {
      let leaf = leaves[local];
      if (leaf === undefined) {
        const rec = recs[local];
        const keys = this.recAlt[rec] ? this.alt : this.pools;
        leaf = leaves[local] = tree.leaf(byFunc ? keys.func : keys.line, this.recStart[rec], this.recEnd[rec]);
      }
      if (recompute) leaf.self += weight;
      else tree.addAt(leaf, weight);
    });
    if (recompute) tree.recomputeTotals();
    return tree;
  }

  /** Keeps where a new record's keys are, its view, and its distinct frame and function keys. */
  private learn(rec: number, start: number, end: number, alt: boolean, tid: number): ThreadView {
    const tv = (this.viewOf[rec] = this.threadView(tid));
    if (rec >= this.uniqStart.length) {
      const n = grownLength(this.uniqStart.length, rec + 1);
      this.uniqStart = growInt(this.uniqStart, n);
      this.uniqLines = growInt(this.uniqLines, n);
      this.uniqFuncs = growInt(this.uniqFuncs, n);
      this.recStart = growInt(this.recStart, n);
      this.recEnd = growInt(this.recEnd, n);
      this.localAll = growInt(this.localAll, n);
      this.localThread = growInt(this.localThread, n);
      this.recPid = growInt(this.recPid, n);
      this.localProcess = growInt(this.localProcess, n);
      this.recWeight = grow(this.recWeight, n);
      const a = new Uint8Array(n);
      a.set(this.recAlt);
      this.recAlt = a;
    }
    this.recStart[rec] = start;
    this.recEnd[rec] = end;
    this.recAlt[rec] = alt ? 1 : 0;
    this.localAll[rec] = this.all.recs.push(rec) - 1;
    this.localThread[rec] = tv.recs.push(rec) - 1;
    const pid = (this.recPid[rec] = this.pidOf(tid));
    const pv = this.byProcess.get(pid);
    if (pv !== undefined) this.localProcess[rec] = pv.recs.push(rec) - 1;
    const keys = alt ? this.alt : this.pools;
    const line = keys.line, func = keys.func;
    if (this.uniqUsed + 2 * (end - start) > this.uniq.length) this.uniq = growInt(this.uniq, grownLength(this.uniq.length, this.uniqUsed + 2 * (end - start)));
    let frames = 0, funcs = 0;
    for (let i = start; i < end; i++) {
      if (line[i] >= frames) frames = line[i] + 1;
      if (func[i] >= funcs) funcs = func[i] + 1;
    }
    if (this.lineStamp.length < frames) this.lineStamp = grow(this.lineStamp, frames);
    if (this.funcStamp.length < funcs) this.funcStamp = grow(this.funcStamp, funcs);
    const serial = ++this.stampSerial;
    const u = this.uniq, ls = this.lineStamp, fs = this.funcStamp;
    let o = this.uniqUsed;
    this.uniqStart[rec] = o;
    for (let i = start; i < end; i++) {
      if (ls[line[i]] !== serial) {
        ls[line[i]] = serial;
        u[o++] = line[i];
      }
    }
    this.uniqLines[rec] = o - this.uniqStart[rec];
    const f0 = o;
    for (let i = start; i < end; i++) {
      if (fs[func[i]] !== serial) {
        fs[func[i]] = serial;
        u[o++] = func[i];
      }
    }
    this.uniqFuncs[rec] = o - f0;
    this.uniqUsed = o;
    return tv;
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

  /** Builds the function trees from the line trees (brought up to date first), O(nodes). */
  private enableFunctionTrees(): void {
    const fm = this.frameFunc;
    const build = (v: ThreadView) => {
      this.flushTree(v, v.lineTree, v.lineDeltas, v.lineLeaf, false);
      const t = new CallTree();
      const merge = (from: CallNode, to: CallNode) => {
        to.total += from.total;
        to.self += from.self;
        if (from.children === null) return;
        for (const c of from.children.values()) {
          const target = to.childOrCreate(fm[c.key], t.created);
          if (target.depth > t.maxDepth) t.maxDepth = target.depth;
          merge(c, target);
        }
      };
      merge(v.lineTree.root, t.root);
      v.funcTree = t;
    };
    build(this.all);
    for (const v of this.byThread.values()) build(v);
    for (const v of this.byProcess.values()) build(v);
    this.funcTreesEnabled = true;
  }
}

function grownLength(len: number, n: number): number {
  while (len < n) len *= 2;
  return len;
}

function grow(a: Float64Array, n: number): Float64Array {
  const b = new Float64Array(grownLength(a.length, n));
  b.set(a);
  return b;
}

function growInt(a: Int32Array, n: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}
