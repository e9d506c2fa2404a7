// One aggregation of stacks: call trees and per-key counters for all threads and for each thread,
// by line and (once asked for) by function. The model keeps one over the stacks as sampled, and
// another over the stacks without the debugger's frames while that view is in use.

import { CallNode, CallTree, KeyStats } from './calltree';

export type GroupBy = 'function' | 'line';

/** One view of the data: all threads, or one thread. */
export class ThreadView {
  readonly lineTree = new CallTree();
  funcTree: CallTree | null = null;
  readonly lineStats = new KeyStats();
  readonly funcStats = new KeyStats();
  sampleCount = 0;
}

export class Aggregate {
  readonly all = new ThreadView();
  readonly byThread = new Map<number, ThreadView>();
  private funcTreesEnabled = false;
  private lineStamp: Float64Array = new Float64Array(64);
  private funcStamp: Float64Array = new Float64Array(64);
  private stampSerial = 0;

  /**
   * @param frameFunc frame key -> function key, shared with the model (it grows as frames are
   *   announced)
   */
  constructor(private readonly frameFunc: readonly number[]) {}

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

  /**
   * Adds `weight` samples of one stack: line[start..end), root first.
   * @param line frame keys
   * @param func the function key of each, at the same indexes
   * @param frames, funcs how many frame and function keys exist (for the counters' size)
   */
  add(line: Int32Array, func: Int32Array, start: number, end: number, tid: number, weight: number, frames: number, funcs: number): void {
    const tv = this.threadView(tid);
    this.all.lineStats.ensure(frames);
    this.all.funcStats.ensure(funcs);
    tv.lineStats.ensure(frames);
    tv.funcStats.ensure(funcs);
    if (this.lineStamp.length < frames) this.lineStamp = grow(this.lineStamp, frames);
    if (this.funcStamp.length < funcs) this.funcStamp = grow(this.funcStamp, funcs);

    this.all.lineTree.insert(line, start, end, weight);
    tv.lineTree.insert(line, start, end, weight);
    if (this.funcTreesEnabled) {
      this.all.funcTree!.insert(func, start, end, weight);
      tv.funcTree!.insert(func, start, end, weight);
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
    for (let i = start; i < end; i++) {
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
    if (end > start) {
      aL.self[line[end - 1]] += weight;
      tL.self[line[end - 1]] += weight;
      aF.self[func[end - 1]] += weight;
      tF.self[func[end - 1]] += weight;
    }
  }

  /**
   * Calls `fn` once per distinct stack of each thread with its number of samples: the stacks of
   * the line trees, from which everything else can be rebuilt (samples themselves are not kept).
   */
  forEachStack(fn: (tid: number, keys: readonly number[], count: number) => void): void {
    for (const [tid, view] of this.byThread) {
      const path: number[] = [];
      const walk = (node: CallNode) => {
        if (node.self > 0) fn(tid, path, node.self);
        if (node.children === null) return;
        for (const c of node.children.values()) {
          path.push(c.key);
          walk(c);
          path.pop();
        }
      };
      walk(view.lineTree.root);
    }
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

  private enableFunctionTrees(): void {
    this.funcTreesEnabled = true;
    const fm = this.frameFunc;
    const build = (v: ThreadView) => {
      const t = new CallTree();
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
