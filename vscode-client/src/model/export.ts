// Profile file writers from a ProfileModel: speedscope JSON and Chrome/VS Code .cpuprofile.
// Samples are not kept, so both formats list each distinct stack once with its weight; the order
// of samples in time is not recorded (as in collapsed stacks).

import { CallNode, ProfileModel, threadLabel } from './profile';

export interface ExportOptions {
  /** Milliseconds per sample (1000 / rate). Without it weights are sample counts. */
  sampleIntervalMs?: number;
  name?: string;
}

function frameName(model: ProfileModel, idx: number): string {
  const f = model.frames[idx];
  return f.native && f.module ? `${f.function} [${f.module}]` : f.function;
}

/** speedscope file format (https://www.speedscope.app/file-format-schema.json), one profile per thread. */
export function toSpeedscope(model: ProfileModel, opts: ExportOptions = {}): object {
  const frames = model.frames.map((f, i) => {
    const o: { name: string; file?: string; line?: number } = { name: frameName(model, i) };
    if (f.file) o.file = f.file;
    if (f.line > 0) o.line = f.line;
    return o;
  });
  const unit = opts.sampleIntervalMs ? 'milliseconds' : 'none';
  const w = opts.sampleIntervalMs ?? 1;
  const profiles = model.threadList().map(({ id, info }) => {
    const samples: number[][] = [];
    const weights: number[] = [];
    const walk = (node: CallNode, path: number[]) => {
      if (node.self > 0) {
        samples.push(path);
        weights.push(node.self * w);
      }
      if (node.children) for (const c of node.children.values()) walk(c, [...path, c.key]);
    };
    const tree = model.view(id)!.lineTree;
    walk(tree.root, []);
    const end = weights.reduce((a, b) => a + b, 0);
    return { type: 'sampled', name: threadLabel(id, info), unit, startValue: 0, endValue: end, samples, weights };
  });
  return {
    $schema: 'https://www.speedscope.app/file-format-schema.json',
    name: opts.name ?? 'dapprof profile',
    exporter: 'dapprof',
    activeProfileIndex: 0,
    shared: { frames },
    profiles,
  };
}

function fileUrl(file: string): string {
  if (!file.startsWith('/')) return file;
  return 'file://' + file.split('/').map(encodeURIComponent).join('/');
}

/** Chrome DevTools / VS Code .cpuprofile of all threads merged. */
export function toCpuProfile(model: ProfileModel, opts: ExportOptions = {}): object {
  const nodes: object[] = [];
  const samples: number[] = [];
  let nextId = 1;
  const walk = (node: CallNode): number => {
    const id = nextId++;
    const entry: { id: number; callFrame: object; hitCount: number; children: number[] } = {
      id,
      callFrame:
        node.parent === null
          ? { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 }
          : {
              functionName: frameName(model, node.key),
              scriptId: String(node.key + 1),
              url: fileUrl(model.frames[node.key].file),
              lineNumber: model.frames[node.key].line - 1,
              columnNumber: 0,
            },
      hitCount: node.self,
      children: [],
    };
    nodes.push(entry);
    for (let i = 0; i < node.self; i++) samples.push(id);
    if (node.children) for (const c of node.children.values()) entry.children.push(walk(c));
    return id;
  };
  walk(model.all.lineTree.root);
  // Sample i is taken at i intervals and lasts until the next one (the last until endTime), as
  // DevTools and VS Code's viewer read a profile: so each sample counts one interval.
  const intervalUs = Math.round((opts.sampleIntervalMs ?? 10) * 1000);
  return {
    nodes,
    startTime: 0,
    endTime: samples.length * intervalUs,
    samples,
    timeDeltas: samples.map((_, i) => (i === 0 ? 0 : intervalUs)),
  };
}
