// Which node the last draw of the flame graph put where, for the mouse and the keyboard: per row
// (depth), each drawn node's x and width in drawing order. The arrays are kept from draw to draw
// and only their used length reset, so that a draw allocates nothing for them.

import type { CallNode } from '../model/profile';

export class HitRows {
  private xs: number[][] = [];
  private ws: number[][] = [];
  private nodes: CallNode[][] = [];
  /** How many entries of each row the last draw used. */
  private used: number[] = [];

  /** Before a draw: no node drawn yet. */
  clear(): void {
    this.used.fill(0);
  }

  add(depth: number, x: number, w: number, node: CallNode): void {
    let xs = this.xs[depth];
    if (!xs) {
      xs = this.xs[depth] = [];
      this.ws[depth] = [];
      this.nodes[depth] = [];
      this.used[depth] = 0;
    }
    const i = this.used[depth]++;
    xs[i] = x;
    this.ws[depth][i] = w;
    this.nodes[depth][i] = node;
  }

  /** The nodes drawn in a row, with their x and width (in drawing order). */
  row(depth: number): Array<{ node: CallNode; x: number; w: number }> {
    const out: Array<{ node: CallNode; x: number; w: number }> = [];
    const n = this.xs[depth] ? this.used[depth] : 0;
    for (let i = 0; i < n; i++) out.push({ node: this.nodes[depth][i], x: this.xs[depth][i], w: this.ws[depth][i] });
    return out;
  }

  /** The node drawn in row `d` across `px` (CSS px of the canvas). */
  at(px: number, d: number): CallNode | undefined {
    const xs = d >= 0 ? this.xs[d] : undefined;
    if (!xs) return undefined;
    // Rows are filled in depth-first order, not sorted by x; one row holds few enough nodes.
    const ws = this.ws[d], ns = this.nodes[d], n = this.used[d];
    for (let i = 0; i < n; i++) if (px >= xs[i] && px < xs[i] + ws[i]) return ns[i];
    return undefined;
  }
}
