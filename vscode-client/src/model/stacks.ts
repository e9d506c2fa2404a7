// Interned stacks: each distinct (thread, sequence of frame IDs) of a run gets a dense record
// number the first time it is sampled, found again by a hash of the raw frame IDs. A program
// spends most of its time in few stacks, so most samples are one hash of the IDs and a counter
// increment, instead of a walk down several call trees with a map lookup per frame (and a lookup
// of each frame ID, which are large numbers and slow map keys). A tree takes in the new samples
// only when read (aggregate.ts), once per distinct stack that got some.
//
// Everything is in typed arrays that grow by doubling: no allocation per sample, and memory in
// proportion to the distinct stacks, not to the samples.

/**
 * Samples per stack record not yet added to something (the trees, a view's trees or counters),
 * and which records have some, in the order they got them. Memory: a counter per record.
 */
export class Deltas {
  pending = new Float64Array(256);
  dirty = new Int32Array(256);
  dirtyCount = 0;
  private isDirty = new Uint8Array(256);

  add(rec: number, weight: number): void {
    if (rec >= this.pending.length) {
      const n = capacity(this.pending.length, rec + 1);
      this.pending = copy(new Float64Array(n), this.pending);
      this.isDirty = copy(new Uint8Array(n), this.isDirty);
    }
    this.pending[rec] += weight;
    if (this.isDirty[rec] === 0) {
      this.isDirty[rec] = 1;
      if (this.dirtyCount === this.dirty.length) this.dirty = growInt(this.dirty, this.dirtyCount + 1);
      this.dirty[this.dirtyCount++] = rec;
    }
  }

  /** Calls `fn` with each record that has pending samples and their weight, and clears them. */
  drain(fn: (rec: number, weight: number) => void): void {
    const n = this.dirtyCount;
    this.dirtyCount = 0;
    for (let k = 0; k < n; k++) {
      const rec = this.dirty[k];
      const w = this.pending[rec];
      this.pending[rec] = 0;
      this.isDirty[rec] = 0;
      fn(rec, w);
    }
  }
}

export class StackTable {
  /** Number of records. */
  size = 0;
  /** Per record: its thread key, where its frames start in the pools, and how many. */
  tid = new Float64Array(256);
  start = new Int32Array(256);
  length = new Int32Array(256);
  /** Per record: samples so far. */
  count = new Float64Array(256);
  /** Samples not yet given to the aggregates. */
  readonly deltas = new Deltas();
  /**
   * Pools of the records' frames at the same offsets: the raw frame IDs (exact in a double up
   * to 2^53), and the model's frame and function keys (filled by the model for a new record).
   */
  ids = new Float64Array(4096);
  line = new Int32Array(4096);
  func = new Int32Array(4096);
  /** Whether the last intern() created its record. */
  created = false;

  private hashes = new Int32Array(256);
  private used = 0;
  /** Open addressing: slot -> record + 1, 0 when empty; at most half full. */
  private slots = new Int32Array(1024);

  /** The record of a stack of a thread, created when new (then `created` is set). */
  intern(tid: number, ids: ArrayLike<number>): number {
    const n = ids.length;
    let h = mix(0x9747b28c ^ n, tid);
    for (let i = 0; i < n; i++) h = mix(h, ids[i]);
    h = finish(h);
    const slots = this.slots, mask = slots.length - 1;
    let slot = h & mask;
    for (let r = slots[slot] - 1; r >= 0; r = slots[slot] - 1) {
      if (this.hashes[r] === h && this.same(r, tid, ids)) {
        this.created = false;
        return r;
      }
      slot = (slot + 1) & mask;
    }
    this.created = true;
    return this.add(slot, h, tid, ids);
  }

  /** Counts `weight` samples of a record. */
  addSamples(rec: number, weight: number): void {
    if (weight === 0) return;
    this.count[rec] += weight;
    this.deltas.add(rec, weight);
  }

  private same(r: number, tid: number, ids: ArrayLike<number>): boolean {
    const n = ids.length;
    if (this.length[r] !== n || this.tid[r] !== tid) return false;
    const pool = this.ids, o = this.start[r];
    for (let i = 0; i < n; i++) if (pool[o + i] !== ids[i]) return false;
    return true;
  }

  private add(slot: number, h: number, tid: number, ids: ArrayLike<number>): number {
    const r = this.size++;
    if (r === this.tid.length) this.growRecords();
    const n = ids.length;
    if (this.used + n > this.ids.length) {
      const len = capacity(this.ids.length, this.used + n);
      this.ids = copy(new Float64Array(len), this.ids);
      this.line = copy(new Int32Array(len), this.line);
      this.func = copy(new Int32Array(len), this.func);
    }
    this.tid[r] = tid;
    this.start[r] = this.used;
    this.length[r] = n;
    this.hashes[r] = h;
    for (let i = 0; i < n; i++) this.ids[this.used + i] = ids[i];
    this.used += n;
    this.slots[slot] = r + 1;
    if (this.size * 2 > this.slots.length) this.rehash();
    return r;
  }

  private growRecords(): void {
    const len = this.tid.length * 2;
    this.tid = copy(new Float64Array(len), this.tid);
    this.start = copy(new Int32Array(len), this.start);
    this.length = copy(new Int32Array(len), this.length);
    this.count = copy(new Float64Array(len), this.count);
    this.hashes = copy(new Int32Array(len), this.hashes);
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2), mask = slots.length - 1;
    for (let r = 0; r < this.size; r++) {
      let s = this.hashes[r] & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = r + 1;
    }
    this.slots = slots;
  }
}

/**
 * One step of MurmurHash3 (x86, 32-bit) over an integer below 2^53: its high 32 bits folded
 * into the low ones first (one step instead of two; the IDs are compared in full anyway).
 */
function mix(h: number, x: number): number {
  let k = (x | 0) ^ Math.imul((x / 4294967296) | 0, 0x9e3779b1);
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, 0x1b873593);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function capacity(len: number, n: number): number {
  while (len < n) len *= 2;
  return len;
}

function copy<T extends Float64Array | Int32Array | Uint8Array>(to: T, from: T): T {
  to.set(from as never);
  return to;
}

function growInt(a: Int32Array, n: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(capacity(a.length, n));
  b.set(a);
  return b;
}
