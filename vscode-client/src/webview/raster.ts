// Rectangles written straight into an ImageData's pixels (one 32-bit word each): for thousands of
// small rectangles per frame this is far cheaper than a fillRect each in a software canvas.

/**
 * Fills the rectangle (x, y, w, h), in CSS px, of a `pw` x `ph` pixel buffer drawn at `dpr`
 * device pixels per CSS px, with the pixel `c`; at least one pixel wide.
 */
export function fillPixels(px: Uint32Array, pw: number, ph: number, dpr: number, x: number, y: number, w: number, h: number, c: number): void {
  // Rounding by `| 0` of a non-negative number plus 0.5: Math.round's cost, per node, shows.
  const x0 = (x * dpr + 0.5) | 0;
  let x1 = ((x + w) * dpr + 0.5) | 0;
  if (x1 <= x0) x1 = x0 + 1;
  if (x1 > pw) x1 = pw;
  const y0 = (y * dpr + 0.5) | 0;
  let y1 = ((y + h) * dpr + 0.5) | 0;
  if (y1 > ph) y1 = ph;
  const n = x1 - x0;
  if (n === 1) for (let o = y0 * pw + x0, e = y1 * pw; o < e; o += pw) px[o] = c;
  else if (n <= 16) {
    // Narrow nodes are most of them: a plain loop beats a fill() call per line.
    for (let yy = y0, o = y0 * pw + x0; yy < y1; yy++, o += pw) for (let k = 0; k < n; k++) px[o + k] = c;
  } else for (let yy = y0; yy < y1; yy++) px.fill(c, yy * pw + x0, yy * pw + x1);
}
