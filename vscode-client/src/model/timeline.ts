// Samples over time: the run cut into buckets of equal width from its first sample, each with the
// samples of every interned stack record (stacks.ts) that fell into it, and its samples per
// thread. A sample's time is spread over its event: the daemon stamps an event with its first and
// last sample (`startTime`, `endTime`), and the event's samples are evenly spaced between them,
// in their order (a `stacks` entry's count is a run of consecutive samples).
//
// Memory stays bounded on long runs: when a sample falls past the last bucket, neighbouring
// buckets are merged in pairs (the width doubles), so there are at most MAX_BUCKETS, each holding
// the distinct stacks sampled in it, not the samples. A bucket is a map while samples arrive in
// it, and two packed arrays (records in order, their counts: 8 bytes a stack) once a later
// bucket gets samples, since an hour of a busy program holds millions of (bucket, stack) pairs.

/** A span of time, milliseconds since the Unix epoch: [start, end). */
import { processOfKey } from './aggregate';
export interface TimeRange {
  start: number;
  end: number;
}

export const MAX_BUCKETS = 2048;
export const FIRST_WIDTH_MS = 100;

export class Timeline {
  /** Time of the start of bucket 0; NaN before the first timed sample. */
  origin = NaN;
  /** Width of every bucket, ms. */
  width: number;
  /** Per bucket: stack record -> samples, while open; packed once closed. */
  private readonly open: Array<Map<number, number> | null> = [];
  private readonly packedRecs: Int32Array[] = [];
  private readonly packedCounts: Uint32Array[] = [];
  /** Per bucket: thread key -> samples. */
  readonly threads: Map<number, number>[] = [];
  /** Per bucket: samples. */
  readonly totals: number[] = [];
  /** Time of the last sample placed. */
  lastTime = NaN;
  /** Incremented by every event placed; per bucket, the serial of the last event that reached it. */
  serial = 0;
  readonly modified: number[] = [];
  /** Samples of events without a time, before any timed one (not on the timeline). */
  untimed = 0;

  constructor(
    readonly maxBuckets = MAX_BUCKETS,
    firstWidth = FIRST_WIDTH_MS,
    /** A thread key's process (0 unknown): what a process key (aggregate.ts) counts. */
    private readonly pidOf: (tid: number) => number = () => 0,
  ) {
    this.width = firstWidth;
  }

  /**
   * Places the samples of one event: entries of `weights[i]` consecutive samples each, of record
   * `recs[i]` and thread `tids[i]`, evenly spaced over [start, end].
   */
  addEvent(start: number | undefined, end: number | undefined, recs: ArrayLike<number>, tids: ArrayLike<number>, weights: ArrayLike<number>): void {
    let n = 0;
    for (let i = 0; i < weights.length; i++) n += weights[i];
    if (n === 0) return;
    const t0 = start ?? end ?? this.lastTime;
    if (Number.isNaN(t0)) {
      this.untimed += n;
      return;
    }
    const t1 = Math.max(t0, end ?? t0);
    if (Number.isNaN(this.origin)) this.origin = t0;
    this.serial++;
    const step = n > 1 ? (t1 - t0) / (n - 1) : 0;
    let j = 0;
    for (let i = 0; i < recs.length; i++) {
      const w = weights[i];
      if (w === 0) continue;
      const first = this.bucketOf(t0 + j * step);
      const last = this.bucketOf(t0 + (j + w - 1) * step);
      if (first === last) this.put(first, recs[i], tids[i], w);
      else for (let k = 0; k < w; k++) this.put(this.bucketOf(t0 + (j + k) * step), recs[i], tids[i], 1);
      j += w;
    }
    this.lastTime = Math.max(Number.isNaN(this.lastTime) ? t1 : this.lastTime, t1);
  }

  /** The bucket of a time, merging buckets first when it lies past the last one there can be. */
  bucketOf(t: number): number {
    let b = Math.max(0, Math.floor((t - this.origin) / this.width));
    while (b >= this.maxBuckets) {
      this.coarsen();
      b = Math.max(0, Math.floor((t - this.origin) / this.width));
    }
    return b;
  }

  /** Start time of a bucket. */
  bucketStart(b: number): number {
    return this.origin + b * this.width;
  }

  get bucketCount(): number {
    return this.totals.length;
  }

  /** Samples of a bucket, of one thread, one process (processKey) or of all (undefined). */
  count(b: number, thread?: number): number {
    if (thread === undefined) return this.totals[b] ?? 0;
    const pid = processOfKey(thread);
    if (pid === undefined) return this.threads[b]?.get(thread) ?? 0;
    let n = 0;
    for (const [tid, c] of this.threads[b] ?? []) if (this.pidOf(tid) === pid) n += c;
    return n;
  }

  /** Calls `fn` with each stack record of a bucket and its samples. */
  forEachRec(b: number, fn: (rec: number, samples: number) => void): void {
    const m = this.open[b];
    if (m) for (const [rec, n] of m) fn(rec, n);
    else {
      const r = this.packedRecs[b], c = this.packedCounts[b];
      for (let i = 0; i < r.length; i++) fn(r[i], c[i]);
    }
  }

  /** Whether a bucket of [first, end) got samples after event `serial`. */
  changedSince(first: number, end: number, serial: number): boolean {
    for (let b = first; b < end; b++) if (this.modified[b] > serial) return true;
    return false;
  }

  /** Distinct (bucket, stack) pairs held (the bench reports it). */
  get entries(): number {
    let n = 0;
    for (let b = 0; b < this.totals.length; b++) n += this.open[b]?.size ?? this.packedRecs[b].length;
    return n;
  }

  /** The buckets that overlap a range: [first, end). */
  bucketsIn(r: TimeRange): [number, number] {
    if (Number.isNaN(this.origin)) return [0, 0];
    // A range is usually made of bucket edges: rounding must not move it by a bucket.
    const first = Math.max(0, Math.floor((r.start - this.origin) / this.width + 1e-9));
    const end = Math.min(this.totals.length, Math.ceil((r.end - this.origin) / this.width - 1e-9));
    return [first, Math.max(first, end)];
  }

  private put(b: number, rec: number, tid: number, w: number): void {
    while (this.totals.length <= b) {
      const last = this.totals.length - 1;
      if (last >= 0) this.pack(last);
      this.totals.push(0);
      this.open.push(new Map());
      this.packedRecs.push(EMPTY_RECS);
      this.packedCounts.push(EMPTY_COUNTS);
      this.threads.push(new Map());
      this.modified.push(0);
    }
    this.modified[b] = this.serial;
    this.totals[b] += w;
    let r = this.open[b];
    if (r === null) r = this.unpack(b);
    r.set(rec, (r.get(rec) ?? 0) + w);
    const t = this.threads[b];
    t.set(tid, (t.get(tid) ?? 0) + w);
  }

  /** Merges buckets in pairs: 2k and 2k+1 become k. */
  private coarsen(): void {
    const n = this.totals.length;
    for (let b = 0; b < n; b += 2) {
      const to = b >> 1;
      const m = this.unpack(b);
      let total = this.totals[b];
      const threads = this.threads[b];
      if (b + 1 < n) {
        this.forEachRec(b + 1, (rec, c) => m.set(rec, (m.get(rec) ?? 0) + c));
        total += this.totals[b + 1];
        merge(threads, this.threads[b + 1]);
      }
      this.open[to] = m;
      this.packedRecs[to] = EMPTY_RECS;
      this.packedCounts[to] = EMPTY_COUNTS;
      this.totals[to] = total;
      this.modified[to] = Math.max(this.modified[b], this.modified[b + 1] ?? 0);
      this.threads[to] = threads;
      if (b + 2 < n) this.pack(to);
    }
    const m = (n + 1) >> 1;
    for (const a of [this.totals, this.open, this.packedRecs, this.packedCounts, this.threads, this.modified]) a.length = m;
    this.width *= 2;
  }

  private pack(b: number): void {
    const m = this.open[b];
    if (!m) return;
    const recs = Int32Array.from(m.keys()).sort();
    const counts = new Uint32Array(recs.length);
    for (let i = 0; i < recs.length; i++) counts[i] = m.get(recs[i])!;
    this.packedRecs[b] = recs;
    this.packedCounts[b] = counts;
    this.open[b] = null;
  }

  /** A closed bucket as a map again (it gets samples, or is merged). */
  private unpack(b: number): Map<number, number> {
    let m = this.open[b];
    if (m) return m;
    m = new Map();
    this.forEachRec(b, (rec, c) => m!.set(rec, c));
    this.open[b] = m;
    this.packedRecs[b] = EMPTY_RECS;
    this.packedCounts[b] = EMPTY_COUNTS;
    return m;
  }
}

const EMPTY_RECS = new Int32Array(0);
const EMPTY_COUNTS = new Uint32Array(0);

function merge(into: Map<number, number>, from: Map<number, number>): void {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
}
