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

import type { CallNode, ProfileModel } from './profile';

export interface Heat {
  own: number;
  total: number;
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
  /** Samples of the view: what the shares are of. */
  readonly sampleCount: number;
  /** The frames' file paths, as the daemon sent them -> their heat. */
  readonly files: Map<string, FileHeat>;
}

export function sourceHeat(model: ProfileModel, thread: number | undefined, hideDebugger: boolean): SourceHeat {
  const files = new Map<string, FileHeat>();
  const tree = model.tree('line', thread, hideDebugger);
  if (tree === undefined) return { sampleCount: 0, files };
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
      if (info.line > 0) bump(f.lines, info.line, func.function, node, !onPath.has(lineKey));
      let fh = f.functions.get(func.function);
      if (fh === undefined) f.functions.set(func.function, (fh = { function: func.function, line: func.line, own: 0, total: 0 }));
      fh.own += node.self;
      if (!onPath.has(funcKey)) fh.total += node.total;
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
  return { sampleCount: tree.root.total, files };
}

function bump(lines: Map<number, LineHeat>, line: number, func: string, node: CallNode, outermost: boolean): void {
  let h = lines.get(line);
  if (h === undefined) lines.set(line, (h = { own: 0, total: 0, function: func, frameTotal: 0, byFunction: new Map() }));
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

/** "12.4% own · 30.1% total" */
export function heatText(h: Heat, sampleCount: number): string {
  return `${share(h.own, sampleCount)} own · ${share(h.total, sampleCount)} total`;
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
