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

  /** Adds `weight` samples of the path keys[start..end), root first. */
  insert(keys: ArrayLike<number>, start: number, end: number, weight: number): void {
    let node = this.root;
    node.total += weight;
    for (let i = start; i < end; i++) {
      node = node.childOrCreate(keys[i], this.created);
      node.total += weight;
    }
    node.self += weight;
    if (end - start > this.maxDepth) this.maxDepth = end - start;
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
