// Chromium DevTools Protocol helpers of the bench: the page's JavaScript heap after a garbage
// collection, and a CPU profile of a step summarized as the functions with the most self time
// (`--profile`; build without --production first to read real function names).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CDPSession, Page } from 'playwright-core';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

export class Cdp {
  private constructor(private readonly session: CDPSession) {}

  static async attach(page: Page): Promise<Cdp> {
    const session = await page.context().newCDPSession(page);
    await session.send('Profiler.enable');
    await session.send('HeapProfiler.enable');
    return new Cdp(session);
  }

  /** Bytes of the page's JavaScript heap in use, after a full garbage collection. */
  async heapUsed(): Promise<number> {
    await this.session.send('HeapProfiler.collectGarbage');
    const { usedSize } = await this.session.send('Runtime.getHeapUsage');
    return usedSize;
  }

  /**
   * Runs `fn` under the sampling profiler when `dir` is set: writes NAME.cpuprofile there (for
   * Chrome DevTools or VS Code) and prints the top functions by self time.
   */
  async profiled<T>(dir: string | undefined, name: string, fn: () => Promise<T>): Promise<T> {
    if (dir === undefined) return fn();
    await this.session.send('Profiler.setSamplingInterval', { interval: 200 });
    await this.session.send('Profiler.start');
    const result = await fn();
    const { profile } = (await this.session.send('Profiler.stop')) as unknown as { profile: Profile };
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    printTop(name, profile);
    return result;
  }
}

function printTop(name: string, profile: Profile): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let all = 0;
  for (let i = 0; i < samples.length; i++) {
    const n = byId.get(samples[i])!;
    const f = n.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
    const dt = deltas[i + 1] ?? 0;
    self.set(key, (self.get(key) ?? 0) + dt);
    all += dt;
  }
  console.log(`  profile of ${name}: ${(all / 1000).toFixed(0)} ms sampled; top self time:`);
  for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`    ${((100 * us) / all).toFixed(1).padStart(5)}%  ${k}`);
}
