// Colours of the flame graph, from VS Code's theme (CSS variables set by VS Code on the webview's
// root element, with fallbacks for a plain page) and a hash of the function name.

export interface Palette {
  kind: 'light' | 'dark' | 'high-contrast';
  background: string;
  foreground: string;
  text: string; // text drawn on the coloured nodes
  match: string;
  border: string;
  focusBorder: string;
  /** Bars of the timeline strip. */
  timelineBar: string;
  /** asyncio task frames (their task running), and those of waiting, cancelling or unknown tasks. */
  task: string;
  taskWaiting: string;
  font: string;
}

export function themeKind(body: HTMLElement): Palette['kind'] {
  if (body.classList.contains('vscode-high-contrast-light')) return 'light';
  if (body.classList.contains('vscode-high-contrast')) return 'high-contrast';
  if (body.classList.contains('vscode-dark')) return 'dark';
  if (body.classList.contains('vscode-light')) return 'light';
  // A page outside VS Code: follow the background's lightness.
  return 'light';
}

function cssVar(style: CSSStyleDeclaration, name: string, fallback: string): string {
  const v = style.getPropertyValue(name).trim();
  return v || fallback;
}

export function readPalette(root: HTMLElement, body: HTMLElement): Palette {
  const s = getComputedStyle(root);
  let kind = themeKind(body);
  const background = cssVar(s, '--vscode-editor-background', kind === 'light' ? '#ffffff' : '#1e1e1e');
  if (!body.className.includes('vscode-') && isDark(background)) kind = 'dark';
  const dark = kind !== 'light';
  return {
    kind,
    background,
    foreground: cssVar(s, '--vscode-editor-foreground', dark ? '#cccccc' : '#1f1f1f'),
    text: '#1a1a1a',
    match: cssVar(s, '--vscode-charts-purple', dark ? '#b180d7' : '#652d90'),
    border: cssVar(s, '--vscode-panel-border', dark ? '#80808059' : '#80808059'),
    focusBorder: cssVar(s, '--vscode-focusBorder', dark ? '#007fd4' : '#0090f1'),
    timelineBar: cssVar(s, '--vscode-charts-blue', dark ? '#3794ff' : '#1a85ff'),
    ...taskColours(cssVar(s, '--vscode-charts-green', dark ? '#89d185' : '#388a34'), background),
    font: `${cssVar(s, '--vscode-editor-font-size', '12px').replace(/^(\d+)$/, '$1px')} ${cssVar(
      s,
      '--vscode-font-family',
      'system-ui, -apple-system, "Segoe UI", Ubuntu, sans-serif',
    )}`,
  };
}

/**
 * A task's colour, away from the frames' warm and cool hues: the theme's green; a task that is
 * not running is the same half faded into the background, so that its wait reads as less solid.
 */
function taskColours(green: string, background: string): { task: string; taskWaiting: string } {
  const g = parseColor(green) ?? [56, 138, 52];
  const b = parseColor(background) ?? [255, 255, 255];
  const mix = g.map((v, i) => Math.round((v + b[i]) / 2)) as [number, number, number];
  return { task: rgbCss(g), taskWaiting: rgbCss(mix) };
}

function isDark(color: string): boolean {
  const m = /^#([0-9a-f]{6})/i.exec(color);
  if (!m) return false;
  const n = parseInt(m[1], 16);
  const r = n >> 16, g = (n >> 8) & 255, b = n & 255;
  return 0.299 * r + 0.587 * g + 0.114 * b < 128;
}

/** FNV-1a of a string, for stable colours. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** [r, g, b] of a node: warm hues for Python frames, cool for native ones; stable per name. */
export function nodeRgb(name: string, native: boolean, kind: Palette['kind']): [number, number, number] {
  const h = hashString(name);
  const t = (h & 0xffff) / 0xffff;
  const u = ((h >>> 16) & 0xff) / 0xff;
  let hue: number, sat: number, light: number;
  if (native) {
    hue = 190 + 40 * t;
    sat = 0.45 + 0.2 * u;
  } else {
    hue = 5 + 50 * t; // red .. orange .. yellow
    sat = 0.7 + 0.2 * u;
  }
  light = kind === 'light' ? 0.68 + 0.08 * u : 0.58 + 0.08 * u;
  return hslToRgb(hue, sat, light);
}

/** Muted colour of nodes that do not match a search. */
export function mutedRgb(kind: Palette['kind']): [number, number, number] {
  return kind === 'light' ? [221, 221, 221] : [80, 80, 80];
}

export function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const c = (1 - Math.abs(2 * l - 1)) * s;
  const hp = (h % 360) / 60;
  const x = c * (1 - Math.abs((hp % 2) - 1));
  let r = 0, g = 0, b = 0;
  if (hp < 1) [r, g, b] = [c, x, 0];
  else if (hp < 2) [r, g, b] = [x, c, 0];
  else if (hp < 3) [r, g, b] = [0, c, x];
  else if (hp < 4) [r, g, b] = [0, x, c];
  else if (hp < 5) [r, g, b] = [x, 0, c];
  else [r, g, b] = [c, 0, x];
  const m = l - c / 2;
  return [Math.round((r + m) * 255), Math.round((g + m) * 255), Math.round((b + m) * 255)];
}

export function rgbCss([r, g, b]: [number, number, number]): string {
  return `rgb(${r},${g},${b})`;
}

/** Parses #rgb, #rrggbb, #rrggbbaa or rgb()/rgba() into [r, g, b]; undefined if unknown. */
export function parseColor(c: string): [number, number, number] | undefined {
  let m = /^#([0-9a-f]{3})$/i.exec(c);
  if (m) return [0, 1, 2].map((i) => parseInt(m![1][i] + m![1][i], 16)) as [number, number, number];
  m = /^#([0-9a-f]{6})([0-9a-f]{2})?$/i.exec(c);
  if (m) {
    const n = parseInt(m[1], 16);
    return [n >> 16, (n >> 8) & 255, n & 255];
  }
  m = /^rgba?\(\s*(\d+)[,\s]+(\d+)[,\s]+(\d+)/i.exec(c);
  if (m) return [Number(m[1]), Number(m[2]), Number(m[3])];
  return undefined;
}

const pixelCache = new Map<string, number>();

/** A CSS colour as a pixel of an ImageData (RGBA bytes, little-endian), cached. */
export function packedPixel(color: string): number {
  let p = pixelCache.get(color);
  if (p === undefined) {
    let rgb = parseColor(color);
    if (!rgb) {
      // Any other CSS colour syntax: let a 1x1 canvas resolve it.
      const c = document.createElement('canvas');
      c.width = c.height = 1;
      const x = c.getContext('2d')!;
      x.fillStyle = color;
      x.fillRect(0, 0, 1, 1);
      const d = x.getImageData(0, 0, 1, 1).data;
      rgb = [d[0], d[1], d[2]];
    }
    p = ((255 << 24) | (rgb[2] << 16) | (rgb[1] << 8) | rgb[0]) >>> 0;
    pixelCache.set(color, p);
  }
  return p;
}
