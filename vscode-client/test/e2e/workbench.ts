// What the end-to-end test does in VS Code's page, as a person would: the debug toolbar's
// buttons, notifications, the command palette, launch configurations; and what it reads of the
// flame graph webview: its nodes, where they are drawn, its pixels.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Browser, Frame, Page } from 'playwright-core';
import { sleep } from './code-server';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** A node of the flame graph and where it is drawn. */
export interface NodeInfo {
  function: string;
  file: string;
  line: number;
  total: number;
  /** canvas-relative rectangle */
  x: number;
  y: number;
  w: number;
  h: number;
}

/** VS Code's workbench in the browser page. */
export class Workbench {
  constructor(readonly page: Page) {}

  toolbarButton(label: string) {
    return this.page.locator(`.debug-toolbar .action-label[aria-label^="${label}"]`);
  }

  /** The texts of the notifications on screen. */
  async notifications(): Promise<string[]> {
    return this.page.$$eval('.notifications-toasts .notification-list-item', (els) => els.map((e) => e.textContent ?? ''));
  }

  /** The flame graph page: the webview's inner frame, where the extension's script defines __dapprof. */
  async flame(program: string, timeout: number): Promise<FlameView> {
    const deadline = Date.now() + timeout;
    while (Date.now() < deadline) {
      for (const f of this.page.frames()) {
        if (f.isDetached()) continue;
        const ok = await f.evaluate(() => typeof (window as any).__dapprof === 'object').catch(() => false);
        if (ok) return new FlameView(f, program);
      }
      await sleep(250);
    }
    throw new Error('the flame graph webview did not load');
  }

  /**
   * The text of the webview of `extensionId` once it shows every one of `words` (webviews are
   * iframes in iframes; the outer one's URL names the extension).
   */
  async webviewText(extensionId: string, words: string[], timeout: number): Promise<string> {
    const deadline = Date.now() + timeout;
    let last = '';
    while (Date.now() < deadline) {
      for (const f of this.page.frames()) {
        if (f.isDetached()) continue;
        const owner = [f.url(), f.parentFrame()?.url() ?? ''].join(' ');
        if (!owner.includes(extensionId)) continue;
        const text = await f.evaluate(() => document.body?.innerText ?? '').catch(() => '');
        if (words.every((w) => text.includes(w))) return text;
        if (text) last = text;
      }
      await sleep(250);
    }
    throw new Error(`the webview of ${extensionId} never showed ${words.join(', ')}; last text: ${last.slice(0, 300)}`);
  }

  /** Runs a command from the command palette, by its title. */
  async runCommand(title: string): Promise<void> {
    const page = this.page;
    await page.keyboard.press('Control+Shift+p');
    const input = page.locator('.quick-input-widget input');
    // A webview that has just taken the focus (a profile file opened) may not pass the keys on
    // yet; the title bar's command center opens the same input with the mouse.
    if (!(await input.waitFor({ timeout: 5000 }).then(() => true, () => false))) {
      process.stderr.write(`runCommand ${title}: the palette's keys went nowhere; the command center instead\n`);
      await page.locator('.command-center .command-center-center').first().click();
      await input.waitFor();
      // The mouse left there keeps the command center's hover open, over the debug toolbar: to
      // the activity bar's empty middle instead.
      const height = page.viewportSize()?.height ?? 1000;
      await page.mouse.move(20, height * 0.55);
    }
    await input.fill(`>${title}`);
    await page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: title }).first().waitFor();
    await page.keyboard.press('Enter');
  }

  /**
   * Runs a command of the extension from the palette. The palette lists the commands known when
   * it opens: until the workbench has read the extension's contributions (seconds after it loads
   * on a busy machine), it is opened again.
   */
  async runExtensionCommand(title: string): Promise<void> {
    await this.openCommand(title);
    await this.page.keyboard.press('Enter');
  }

  /** Waits until the palette lists `title` (the workbench has read every contribution), then closes it. */
  async waitForCommand(title: string): Promise<void> {
    await this.openCommand(title);
    await this.page.keyboard.press('Escape');
  }

  /** The palette open on `title`, opened again until it lists it. */
  private async openCommand(title: string): Promise<void> {
    const page = this.page;
    const row = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: title }).first();
    for (let i = 0; ; i++) {
      await page.keyboard.press('Control+Shift+p');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor();
      await input.fill(`>${title}`);
      if (await row.waitFor({ timeout: 3000 }).then(() => true, () => false)) return;
      if (i >= 20) throw new Error(`the command palette never listed "${title}"`);
      await page.keyboard.press('Escape');
      await sleep(1000);
    }
  }

  /**
   * Runs a command that asks with a quick pick, and waits until the pick shows `row`. Once in
   * CI the pick was drawn and then hidden at once (its rows in the page, the widget closed, as
   * when it loses the focus); that is logged with what had the focus, and the command is run
   * once more, as a person would.
   */
  async commandPick(title: string, row: string): Promise<void> {
    const item = this.page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: row }).first();
    await this.runCommand(title);
    if (await item.waitFor({ timeout: 10_000 }).then(() => true, () => false)) return;
    const focus = await this.page.evaluate(() => {
      const a = document.activeElement;
      return a ? `${a.tagName.toLowerCase()}.${a.className} "${a.getAttribute('aria-label') ?? ''}"` : 'nothing';
    });
    process.stderr.write(`${title}: its pick closed before showing "${row}" (the focus: ${focus}); running it again\n`);
    await this.page.keyboard.press('Escape');
    await this.runCommand(title);
    await item.waitFor();
  }

  /**
   * Export Profile… as `format` up to VS Code's save dialog (a path in the quick input), which
   * proposes a name ending in `.suffix`. In CI the export editor opened by the step before took
   * the focus once just after the format had been picked, and the pick closed without a choice:
   * if no save dialog shows, that is logged and the command is run once more, as a person would.
   */
  async exportDialog(format: string, suffix: string): Promise<void> {
    const proposed = () =>
      this.page.waitForFunction(
        (s) => ((document.querySelector('.quick-input-widget input') as HTMLInputElement | null)?.value ?? '').endsWith(`.${s}`),
        suffix,
        { timeout: 15_000 },
      );
    for (let attempt = 0; ; attempt++) {
      await this.commandPick('dapprof: Export Profile…', format);
      await this.page.keyboard.type(format);
      await this.page.keyboard.press('Enter');
      if (await proposed().then(() => true, (e) => (attempt > 0 ? Promise.reject(e) : false))) return;
      process.stderr.write(`Export Profile…: no save dialog after picking "${format}"; running it again\n`);
      await this.page.keyboard.press('Escape');
    }
  }

  /** Starts a launch configuration of the workspace by its name. */
  async startConfiguration(name: string): Promise<void> {
    await this.commandPick('Debug: Select and Start Debugging', name);
    await this.page.keyboard.type(name);
    await this.page.keyboard.press('Enter');
  }
}

/** The flame graph webview, read through its page's model (`__dapprof`) and canvas. */
export class FlameView {
  /** @param program the file whose functions nodes() looks for */
  constructor(
    readonly frame: Frame,
    private readonly program: string,
  ) {}

  /**
   * Nodes of the program's code and where they are drawn, all read at one instant (data keeps
   * arriving): for each path, the widest node of the function `path[0]` of the program anywhere
   * in the tree (below any debugger frames shown), then its children named by the rest of the path.
   */
  async nodes(...paths: string[][]): Promise<Array<NodeInfo | null>> {
    return this.frame.evaluate(
      ([paths, file]) => {
        const app = (window as any).__dapprof;
        const info = (n: any) => app.model.keyInfo(app.groupBy, n.key);
        return paths.map((path) => {
          let best: any = null;
          const stack = [app.graph.tree?.root];
          while (stack.length) {
            const n = stack.pop();
            if (!n) continue;
            if (n.parent && info(n).function === path[0] && info(n).file === file && (!best || n.total > best.total)) best = n;
            for (const c of n.children?.values() ?? []) stack.push(c);
          }
          let n = best;
          for (const name of path.slice(1)) {
            n = [...(n?.children?.values() ?? [])].find((c: any) => info(c).function === name && info(c).file === file);
            if (!n) return null;
          }
          const r = n && app.graph.rectOf(n);
          if (!r) return null;
          return { function: info(n).function, file: info(n).file, line: info(n).line, total: n.total, ...r };
        });
      },
      [paths, this.program] as const,
    );
  }

  async node(path: string[]): Promise<NodeInfo | null> {
    return (await this.nodes(path))[0];
  }

  /** Page coordinates of the canvas's top left corner (through both webview iframes). */
  async origin(): Promise<{ x: number; y: number }> {
    const box = await this.frame.locator('#flame').boundingBox();
    assert.ok(box, 'the flame graph canvas is laid out');
    return { x: box.x, y: box.y };
  }

  /** Colour of a canvas pixel (CSS px), read back from the canvas. */
  async pixel(x: number, y: number): Promise<[number, number, number]> {
    return this.frame.evaluate(
      ([px, py]) => {
        const canvas = (window as any).__dapprof.graph.canvas as HTMLCanvasElement;
        const dpr = canvas.width / canvas.getBoundingClientRect().width;
        const d = canvas.getContext('2d')!.getImageData(Math.floor(px * dpr), Math.floor(py * dpr), 1, 1).data;
        return [d[0], d[1], d[2]] as [number, number, number];
      },
      [x, y] as const,
    );
  }

  /** Waits until the live flame graph holds samples of each named function of `file`. */
  async waitForFunctions(file: string, names: string[], minSamples: number, timeout: number): Promise<void> {
    await this.frame.waitForFunction(
      ([file, names, min]) => {
        const app = (window as any).__dapprof;
        const seen = new Set<string>();
        app.model.funcs.forEach((f: any) => f.file === file && seen.add(f.function));
        return app.state === 'live' && names.every((n) => seen.has(n)) && app.model.totals.sampleCount >= min;
      },
      [file, names, minSamples] as const,
      { timeout, polling: 250 },
    );
  }

  /** Waits until the panel's header shows `state` (Live, Stopped…). */
  async waitForState(state: string, timeout?: number): Promise<void> {
    await this.frame.waitForFunction((s) => document.getElementById('state')?.textContent === s, state, { timeout });
  }
}

/** Waits until something listens on 127.0.0.1:port, as /proc/net/tcp shows (without connecting). */
export async function waitForListening(port: number): Promise<void> {
  const entry = new RegExp(`^\\s*\\d+: 0100007F:${port.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A `, 'm');
  for (let i = 0; !entry.test(readFileSync('/proc/net/tcp', 'utf8')); i++) {
    assert.ok(i < 150, `nothing listens on 127.0.0.1:${port}`);
    await sleep(200);
  }
}

/** A page of the workbench that code-server serves at `url`, on `folder`, once it has loaded. */
export async function openWorkbench(browser: Browser, url: string, folder: string, stepTimeout: number, loadTimeout: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1680, height: 1000 }, deviceScaleFactor: 1 });
  page.setDefaultTimeout(stepTimeout);
  await page.goto(`${url}/?folder=${encodeURIComponent(folder)}`);
  await page.waitForSelector('.monaco-workbench .statusbar', { timeout: loadTimeout });
  return page;
}
