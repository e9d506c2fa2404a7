// Debian's Chromium, headless, driven by playwright-core: the one browser of every test here. No
// browser is downloaded; `home` holds the browser's profile, caches and settings.

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium } from 'playwright-core';

export async function launchChromium(executablePath: string, home: string): Promise<Browser> {
  if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath} (apt-get install chromium, or set CHROMIUM)`);
  mkdirSync(home, { recursive: true });
  return chromium.launch({
    executablePath,
    headless: true,
    // No sandbox (tests may run as root), nothing fetched from the network, and glyphs drawn
    // the same on every run for the pixel checks.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--font-render-hinting=none',
    ],
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache') },
    timeout: 60_000,
  });
}
