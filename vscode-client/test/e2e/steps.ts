// What the end-to-end tests share about running their steps: progress notes on stderr, numbered
// screenshots, steps that skip once one has failed (the later ones depend on it), and the check
// that the extension host logged no error of the extension.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Page } from 'playwright-core';

export class Steps {
  private shot = 0;
  /** The step that failed, if one did. */
  broken = '';
  private readonly t0 = Date.now();

  /**
   * @param label the prefix of notes ("e2e") and screenshots ("" or "profile-only-")
   * @param page the page screenshots are taken of, once there is one
   */
  constructor(
    private readonly label: string,
    private readonly shots: string,
    private readonly prefix: string,
    private readonly page: () => Page | undefined,
  ) {}

  /** Progress on stderr, with the time since the start: where the time goes on a slow machine. */
  note(what: string): void {
    process.stderr.write(`${this.label}: ${((Date.now() - this.t0) / 1000).toFixed(1)}s ${what}\n`);
  }

  /** The next screenshot replaces the last one (an attempt that is tried again). */
  retake(): void {
    this.shot--;
  }

  async screenshot(name: string): Promise<Buffer> {
    const page = this.page();
    if (!page) throw new Error('no page to take a screenshot of');
    return page.screenshot({ path: join(this.shots, `${this.prefix}${String(++this.shot).padStart(2, '0')}-${name}.png`) });
  }

  /** Runs a step unless an earlier one failed; a failure leaves a screenshot and skips the rest. */
  async step(t: TestContext, name: string, body: () => Promise<void>): Promise<void> {
    if (this.broken) {
      t.skip(`an earlier step failed: ${this.broken}`);
      return;
    }
    try {
      await body();
      this.note(`step ${name} passed`);
    } catch (e) {
      this.broken = name;
      await this.screenshot(`FAILED-${name.replace(/\W+/g, '-')}`).catch(() => undefined);
      throw e;
    }
  }
}

/** Errors thrown by the extension are logged by the extension host, attributed to dapprof.dapprof: none may be. */
export function assertNoExtensionErrors(userDataDir: string): void {
  const logs = join(userDataDir, 'logs');
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name === 'exthost.log' || e.name === 'remoteexthost.log') files.push(join(d, e.name));
    }
  };
  if (existsSync(logs)) walk(logs);
  assert.ok(files.length > 0, `no extension host log under ${logs}`);
  const lines = files.flatMap((f) => readFileSync(f, 'utf8').split('\n')).filter((l) => /\[error\]/.test(l) && /dapprof/i.test(l));
  assert.deepEqual(lines, []);
}
