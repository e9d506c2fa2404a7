// The last runs, kept in the workspace's storage so that they outlive their session and a
// window reload: each run's profilingData events as the daemon sent them (one DAP event a line,
// the format `dapprof convert` reads back and writes in every format), and an index of what the
// list shows. The extension reads nothing of a run but its own copy of the stream.

import * as fs from 'fs/promises';
import * as path from 'path';
import type { ProfilingDataBody, ProfilingSummary } from '../model/protocol';
import type { RunInfo } from '../webview/messages';

/** One kept run, as listed. */
export interface KeptRun {
  id: string;
  run: RunInfo;
  summary: ProfilingSummary;
  /** When it ended (ms since the epoch). */
  endedAt: number;
  bytes: number;
}

/** A run's stream above this is not kept (an hour of a busy program with stacks is far below). */
export const MAX_RUN_BYTES = 64 * 1024 * 1024;
export const DEFAULT_KEPT = 10;
const INDEX = 'runs.json';

/** The events of a run, one a line: its batches, then profilingStopped with the summary. */
export function streamText(bodies: readonly ProfilingDataBody[], summary?: ProfilingSummary): string {
  const lines = bodies.map((body) => JSON.stringify({ type: 'event', event: 'profilingData', body }));
  if (summary) lines.push(JSON.stringify({ type: 'event', event: 'profilingStopped', body: { ...summary, reason: 'requested' } }));
  return lines.join('\n') + '\n';
}

/** The profilingData bodies of a kept run's file. */
export function parseStream(text: string): ProfilingDataBody[] {
  const bodies: ProfilingDataBody[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const m = JSON.parse(line) as { event?: string; body?: ProfilingDataBody };
    if (m.event === 'profilingData' && m.body) bodies.push(m.body);
  }
  return bodies;
}

export class RunStore {
  /** Saves are queued: the index is read and written by one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 0;

  /**
   * @param dir the workspace's storage (or the global one without a workspace); undefined keeps nothing
   * @param keep how many runs to keep (the setting dapprof.keptRuns)
   */
  constructor(
    readonly dir: string | undefined,
    private readonly keep: () => number,
  ) {}

  /** The kept runs, newest first. */
  async list(): Promise<KeptRun[]> {
    if (!this.dir) return [];
    try {
      const index = JSON.parse(await fs.readFile(path.join(this.dir, INDEX), 'utf8')) as KeptRun[];
      return Array.isArray(index) ? index : [];
    } catch {
      return [];
    }
  }

  file(id: string): string | undefined {
    return this.dir && /^[\w-]+$/.test(id) ? path.join(this.dir, `${id}.jsonl`) : undefined;
  }

  async bodies(id: string): Promise<ProfilingDataBody[]> {
    const file = this.file(id);
    if (!file) throw new Error(`no kept run "${id}"`);
    return parseStream(await fs.readFile(file, 'utf8'));
  }

  /** Keeps a finished run; resolves to its entry, or undefined when it is not kept (too big, no storage). */
  save(run: RunInfo, bodies: readonly ProfilingDataBody[], summary: ProfilingSummary): Promise<KeptRun | undefined> {
    const saving = this.queue.then(() => this.doSave(run, bodies, summary));
    this.queue = saving.catch(() => undefined);
    return saving;
  }

  private async doSave(run: RunInfo, bodies: readonly ProfilingDataBody[], summary: ProfilingSummary): Promise<KeptRun | undefined> {
    if (!this.dir) return undefined;
    const text = streamText(bodies, summary);
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_RUN_BYTES) return undefined;
    await fs.mkdir(this.dir, { recursive: true });
    const endedAt = Date.now();
    const id = `run-${endedAt}-${this.nextId++}`;
    await fs.writeFile(this.file(id)!, text);
    const entry: KeptRun = { id, run, summary, endedAt, bytes };
    const all = [entry, ...(await this.list())];
    const keep = Math.max(1, Math.min(100, Math.floor(this.keep())));
    for (const old of all.splice(keep)) await fs.rm(this.file(old.id)!, { force: true });
    await fs.writeFile(path.join(this.dir, INDEX), JSON.stringify(all, null, 1));
    return entry;
  }
}

/** "app.py (pid 42)": a kept run in a list (its pid unless its name has it). */
export function keptRunLabel(k: KeptRun): string {
  const pid = k.run.pid && !k.run.session.includes(String(k.run.pid)) ? ` (pid ${k.run.pid})` : '';
  return `${k.run.session}${pid}`;
}

export function keptRunDetail(k: KeptRun): string {
  const when = new Date(k.endedAt).toLocaleString();
  return `${new Intl.NumberFormat('en-US').format(k.summary.sampleCount)} samples in ${(k.summary.duration / 1000).toFixed(1)} s, ended ${when}`;
}
