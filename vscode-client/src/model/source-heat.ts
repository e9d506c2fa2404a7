// Own and total samples per source line and per function of a view of the profile (a thread or
// all of them, with or without the debugger's frames), as the editor shows them. Read from the
// same line tree the flame graph draws, so that "own" and "total" mean what they mean there:
// own is the samples whose leaf is the line (or the function), total the samples with it
// anywhere on their stack, counted once per sample however often it recurses.
//
// A line differs from a tree key: two frames may be on one line (a comprehension and the function
// around it, or a lambda), and a sample holding both counts once for the line. So a node adds its
// total to a line only when no node above it is on that line: those nodes' samples are disjoint.
// Cost: one walk of the tree, O(nodes).
//
// A run that samples waiting asyncio tasks too (async "all") splits its samples: those of running
// code (own and total) and those of waiting tasks (`waiting`: samples with the line on the stack of
// a task that is suspended there, wall time), read from the two views of the model.

import type { CallNode, CallTree, ProfileModel } from './profile';

export interface Heat {
  own: number;
  total: number;
  /** Samples of waiting tasks with the line (the function) on their stack, once per sample; 0 unless split. */
  waiting: number;
}

export interface LineHeat extends Heat {
  /** The function of the line's frame with the most samples (two may share a line). */
  function: string;
  /** Samples of that function's frames on the line. */
  frameTotal: number;
  /** Samples of each function's frames on the line (a frame under another of its function counted again). */
  byFunction: Map<string, number>;
}

export interface FunctionHeat extends Heat {
  /** The function's name as the frames give it (possibly qualified: `Class.method`). */
  function: string;
  /** The smallest line sampled in it (1-based), 0 when unknown. */
  line: number;
}

export interface FileHeat {
  /** 1-based line -> heat. */
  readonly lines: Map<number, LineHeat>;
  /** Function name -> heat. */
  readonly functions: Map<string, FunctionHeat>;
}

export interface SourceHeat {
  /** Samples of the view (of running code, when split): what the shares are of. */
  readonly sampleCount: number;
  /** Samples of waiting tasks (when split). */
  readonly waitingCount: number;
  /** The frames' file paths, as the daemon sent them -> their heat. */
  readonly files: Map<string, FileHeat>;
}

/**
 * The heat of a view; with `splitWaiting`, own and total of the samples of running code, and
 * `waiting` of the waiting tasks' samples.
 */
export function sourceHeat(model: ProfileModel, thread: number | undefined, hideDebugger: boolean, splitWaiting = false): SourceHeat {
  const files = new Map<string, FileHeat>();
  const tree = model.tree('line', thread, splitWaiting ? { hideDebugger, waiting: 'exclude' } : hideDebugger);
  if (tree === undefined) return { sampleCount: 0, waitingCount: 0, files };
  addHeat(model, tree, files, false);
  const waiting = splitWaiting ? model.tree('line', thread, { hideDebugger, waiting: 'only' }) : undefined;
  if (waiting !== undefined) addHeat(model, waiting, files, true);
  return { sampleCount: tree.root.total, waitingCount: waiting?.root.total ?? 0, files };
}

/** Adds a tree's samples to the files' heat: to own and total, or (`waiting`) to waiting. */
function addHeat(model: ProfileModel, tree: CallTree, files: Map<string, FileHeat>, waiting: boolean): void {
  // How many nodes on the path from the root are on a line / in a function, by string key.
  const onPath = new Map<string, number>();
  const fileOf = (file: string) => {
    let f = files.get(file);
    if (f === undefined) files.set(file, (f = { lines: new Map(), functions: new Map() }));
    return f;
  };
  const visit = (node: CallNode): void => {
    const info = model.keyInfo('line', node.key);
    const python = !info.native && info.file !== '';
    let lineKey = '', funcKey = '';
    if (python) {
      const f = fileOf(info.file);
      const func = model.keyInfo('function', model.functionOfFrame(node.key));
      lineKey = `${info.file}\0${info.line}`;
      funcKey = `${info.file}\0\0${func.function}`;
      if (info.line > 0) bump(f.lines, info.line, func.function, node, !onPath.has(lineKey), waiting);
      let fh = f.functions.get(func.function);
      if (fh === undefined) f.functions.set(func.function, (fh = { function: func.function, line: func.line, own: 0, total: 0, waiting: 0 }));
      if (waiting) {
        if (!onPath.has(funcKey)) fh.waiting += node.total;
      } else {
        fh.own += node.self;
        if (!onPath.has(funcKey)) fh.total += node.total;
      }
      onPath.set(lineKey, (onPath.get(lineKey) ?? 0) + 1);
      onPath.set(funcKey, (onPath.get(funcKey) ?? 0) + 1);
    }
    if (node.children !== null) for (const c of node.children.values()) visit(c);
    if (python) {
      leave(onPath, lineKey);
      leave(onPath, funcKey);
    }
  };
  if (tree.root.children !== null) for (const c of tree.root.children.values()) visit(c);
}

function bump(lines: Map<number, LineHeat>, line: number, func: string, node: CallNode, outermost: boolean, waiting: boolean): void {
  let h = lines.get(line);
  if (h === undefined) lines.set(line, (h = { own: 0, total: 0, waiting: 0, function: func, frameTotal: 0, byFunction: new Map() }));
  if (waiting) {
    // The line's function stays the one of its running samples, if any.
    if (outermost) h.waiting += node.total;
    return;
  }
  h.own += node.self;
  if (outermost) h.total += node.total;
  // Two frames on one line: the line stands for the function with the most samples there.
  const n = (h.byFunction.get(func) ?? 0) + node.total;
  h.byFunction.set(func, n);
  if (n > h.frameTotal) {
    h.frameTotal = n;
    h.function = func;
  }
}

function leave(onPath: Map<string, number>, key: string): void {
  const n = onPath.get(key)! - 1;
  if (n === 0) onPath.delete(key);
  else onPath.set(key, n);
}

/**
 * "12.4% own · 30.1% total", and " · 1,200 ms waiting" when waiting tasks' samples hold it (only
 * that for what only waits); `msPerSample` turns samples into time (undefined: samples are said).
 */
export function heatText(h: Heat, sampleCount: number, msPerSample?: number): string {
  const running = `${share(h.own, sampleCount)} own · ${share(h.total, sampleCount)} total`;
  if (!(h.waiting > 0)) return running;
  const waiting = waitingText(h.waiting, msPerSample);
  return h.total > 0 ? `${running} · ${waiting}` : waiting;
}

/** "1,200 ms waiting": waiting tasks' samples as wall time (each is one tick), or as samples. */
export function waitingText(samples: number, msPerSample?: number): string {
  if (msPerSample === undefined) return `${samples.toLocaleString('en-US')} samples waiting`;
  return `${Math.round(samples * msPerSample).toLocaleString('en-US')} ms waiting`;
}

function share(n: number, of: number): string {
  return `${of > 0 ? ((100 * n) / of).toFixed(1) : '0.0'}%`;
}

/** Intensity level 1..levels of a share of samples (0 for none); logarithmic, as profiles are skewed. */
export function heatLevel(total: number, sampleCount: number, levels: number): number {
  if (total <= 0 || sampleCount <= 0) return 0;
  const s = total / sampleCount;
  // 50% and more is the hottest; each level below is a quarter of the one above.
  const l = levels + Math.floor(Math.log(s / 0.5) / Math.log(4));
  return Math.max(1, Math.min(levels, l));
}
