// Small helpers of the page: building elements and formatting numbers.

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]) {
  const e = document.createElement(tag);
  Object.assign(e, props);
  for (const c of children) e.append(c);
  return e;
}

export const nf = new Intl.NumberFormat('en-US');

export function pct(part: number, whole: number): string {
  if (whole <= 0) return '0%';
  const p = (100 * part) / whole;
  return p >= 10 || p === 0 ? `${p.toFixed(1)}%` : `${p.toFixed(2)}%`;
}
