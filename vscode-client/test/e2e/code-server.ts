// Runs code-server (VS Code in the browser) with every directory it writes to inside one run
// directory, and Debian's Chromium (driven by playwright-core) against it. code-server is started
// as the leader of a process group of its own, so that stopping it also ends its extension host,
// file watcher, the debug adapter and debugpy's launcher.

import { createServer } from 'node:net';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

export interface CodeServerOptions {
  /** The code-server launcher (node_modules/.bin/code-server of the e2e package). */
  bin: string;
  /** Everything code-server writes goes below it. */
  runDir: string;
  /** Settings of the user; machine settings (such as dapprof.path) go in `machineSettings`. */
  userSettings: Record<string, unknown>;
  /**
   * Settings of the machine code-server runs on. In a remote window (which code-server's is)
   * VS Code ignores machine-scoped settings found in the user's settings.
   */
  machineSettings: Record<string, unknown>;
}

export class CodeServer {
  readonly userDataDir: string;
  readonly extensionsDir: string;
  readonly logFile: string;
  private child: ChildProcess | undefined;
  url = '';

  constructor(private readonly opts: CodeServerOptions) {
    this.userDataDir = join(opts.runDir, 'user-data');
    this.extensionsDir = join(opts.runDir, 'extensions');
    this.logFile = join(opts.runDir, 'code-server.log');
    for (const d of ['home', 'xdg/config', 'xdg/data', 'xdg/cache', 'tmp', 'user-data/User', 'user-data/Machine', 'extensions'])
      mkdirSync(join(opts.runDir, d), { recursive: true });
    writeFileSync(join(this.userDataDir, 'User', 'settings.json'), JSON.stringify(opts.userSettings, null, 2));
    writeFileSync(join(this.userDataDir, 'Machine', 'settings.json'), JSON.stringify(opts.machineSettings, null, 2));
  }

  /** The environment of code-server and of anything it runs: nothing is written under the real home. */
  env(): NodeJS.ProcessEnv {
    const r = this.opts.runDir;
    return {
      ...process.env,
      HOME: join(r, 'home'),
      XDG_CONFIG_HOME: join(r, 'xdg/config'),
      XDG_DATA_HOME: join(r, 'xdg/data'),
      XDG_CACHE_HOME: join(r, 'xdg/cache'),
      TMPDIR: join(r, 'tmp'),
    };
  }

  installExtension(vsix: string): string {
    return execFileSync(this.opts.bin, ['--user-data-dir', this.userDataDir, '--extensions-dir', this.extensionsDir, '--install-extension', vsix], {
      env: this.env(),
      encoding: 'utf8',
      timeout: 120_000,
    });
  }

  /** Starts code-server on a free loopback port and waits until it answers /healthz. */
  async start(workspace: string, timeoutMs: number): Promise<void> {
    const out = openSync(this.logFile, 'a');
    const args = [
      '--auth', 'none',
      '--bind-addr', '127.0.0.1:0',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--user-data-dir', this.userDataDir,
      '--extensions-dir', this.extensionsDir,
      workspace,
    ];
    // detached: setsid(), so the whole tree can be ended through the process group.
    this.child = spawn(this.opts.bin, args, { env: this.env(), detached: true, stdio: ['ignore', out, out] });
    closeSync(out);
    const pid = this.child.pid;
    if (pid === undefined) throw new Error(`could not start ${this.opts.bin}`);
    // The test script ends this group too if the test itself is killed.
    writeFileSync(join(this.opts.runDir, 'code-server.pgid'), String(pid));
    let exited: string | undefined;
    this.child.on('exit', (code, signal) => (exited = `code-server exited (${signal ?? code}); see ${this.logFile}`));
    const deadline = Date.now() + timeoutMs;
    while (!this.url) {
      if (exited) throw new Error(exited);
      if (Date.now() > deadline) throw new Error(`code-server did not start listening within ${timeoutMs} ms; see ${this.logFile}`);
      const m = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)\//.exec(readFileSync(this.logFile, 'utf8'));
      if (m) this.url = m[1];
      else await sleep(200);
    }
    while (true) {
      if (exited) throw new Error(exited);
      try {
        const r = await fetch(`${this.url}/healthz`);
        if (r.ok) return;
      } catch {
        // not yet
      }
      if (Date.now() > deadline) throw new Error(`code-server did not answer ${this.url}/healthz within ${timeoutMs} ms; see ${this.logFile}`);
      await sleep(200);
    }
  }

  /** Ends code-server's process group: TERM, then KILL what is left after a few seconds. */
  async stop(): Promise<void> {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    this.child = undefined;
    const alive = () => {
      try {
        process.kill(-pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const signal = (s: NodeJS.Signals) => {
      try {
        process.kill(-pid, s);
      } catch {
        // already gone
      }
    };
    signal('SIGTERM');
    for (let i = 0; i < 50 && alive(); i++) await sleep(100);
    if (alive()) signal('SIGKILL');
    for (let i = 0; i < 50 && alive(); i++) await sleep(100);
    if (!alive()) rmSync(join(this.opts.runDir, 'code-server.pgid'), { force: true });
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Debian's Chromium, headless, with its profile, cache and home inside the run directory. */
/** The colour of a pixel of a PNG (a page screenshot), decoded by the browser itself. */
export async function pngPixel(decoder: Page, png: Buffer, x: number, y: number): Promise<[number, number, number]> {
  return decoder.evaluate(
    async ([data, px, py]) => {
      const img = new Image();
      img.src = `data:image/png;base64,${data}`;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d')!;
      ctx.drawImage(img, 0, 0);
      const d = ctx.getImageData(px, py, 1, 1).data;
      return [d[0], d[1], d[2]] as [number, number, number];
    },
    [png.toString('base64'), Math.round(x), Math.round(y)] as const,
  );
}

/** A free loopback port (for a program listening with debugpy --listen, a dapprof serve). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
