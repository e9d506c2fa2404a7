// Call trees: a node per distinct path of keys (frames or functions), with the samples ending
// there (self) and passing through (total); and per-key self/total counters for the table view.

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

  /** Returns the child for key, creating it (then passed to `onCreate`). */
  childOrCreate(key: number, onCreate: (node: CallNode) => void): CallNode {
    let map = this.children;
    if (map === null) map = this.children = new Map();
    let c = map.get(key);
    if (c === undefined) {
      c = new CallNode(key, this, this.depth + 1);
      map.set(key, c);
      this.ordered = null;
      onCreate(c);
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
  maxDepth = 0;
  /** Every node in the order created, so parents before their children (see recomputeTotals). */
  readonly nodes: CallNode[] = [this.root];
  /** Nodes whose self changed without their totals (addSelf): recomputeTotals() is due. */
  stale = false;
  readonly created = (node: CallNode) => {
    this.nodes.push(node);
  };

  get nodeCount(): number {
    return this.nodes.length;
  }

  /** Adds `weight` samples of the path keys[start..end), root first. */
  insert(keys: ArrayLike<number>, start: number, end: number, weight: number): void {
    this.addAt(this.leaf(keys, start, end), weight);
  }

  /**
   * The node at the path keys[start..end), root first, created with its missing ancestors (with
   * no samples). The model keeps it per distinct stack and adds samples there with addAt().
   */
  leaf(keys: ArrayLike<number>, start: number, end: number): CallNode {
    let node = this.root;
    for (let i = start; i < end; i++) node = node.childOrCreate(keys[i], this.created);
    if (end - start > this.maxDepth) this.maxDepth = end - start;
    return node;
  }

  /** Adds `weight` samples ending at `node`: its self, and the total of it and its ancestors. */
  addAt(node: CallNode, weight: number): void {
    node.self += weight;
    for (let n: CallNode | null = node; n !== null; n = n.parent) n.total += weight;
  }

  /** Adds `weight` samples ending at `node` to its self only; recomputeTotals() must follow. */
  addSelf(node: CallNode, weight: number): void {
    node.self += weight;
    this.stale = true;
  }

  /**
   * Every total from the selfs, in two passes over the nodes (children come after their
   * parents): cheaper than walking up from each leaf when many stacks got samples.
   */
  recomputeTotals(): void {
    const ns = this.nodes;
    for (let i = 0; i < ns.length; i++) ns[i].total = ns[i].self;
    for (let i = ns.length - 1; i > 0; i--) ns[i].parent!.total += ns[i].total;
    this.stale = false;
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
