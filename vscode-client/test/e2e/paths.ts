// Where the end-to-end tests find what they run (each may be given by the environment), and the
// time limits they share.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function findClientRoot(): string {
  if (process.env.E2E_CLIENT_ROOT) return process.env.E2E_CLIENT_ROOT;
  for (let d = __dirname; d !== dirname(d); d = dirname(d)) {
    const pkg = join(d, 'package.json');
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).name === 'dapprof') return d;
  }
  throw new Error('vscode-client/ not found above the test; set E2E_CLIENT_ROOT');
}

export const clientRoot = findClientRoot();
export const repoRoot = join(clientRoot, '..');
export const DAPPROF_BIN = process.env.DAPPROF_BIN ?? '';
export const CODE_SERVER_BIN = process.env.CODE_SERVER_BIN ?? join(clientRoot, 'test/e2e/node_modules/.bin/code-server');
export const VSIX = process.env.DAPPROF_VSIX ?? join(clientRoot, 'build/dapprof.vsix');
/** The run directory (code-server's settings, logs and the workspace) of e2e.test.ts; others add a suffix. */
export const RUN_DIR = process.env.E2E_RUN_DIR ?? join(repoRoot, 'build/e2e/run');
export const SHOTS = process.env.E2E_SCREENSHOTS ?? join(repoRoot, 'build/e2e-screenshots');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** Generous for a loaded 2-core machine: VS Code's workbench alone takes 5 to 20 s to load there. */
export const LONG = 90_000;
export const STEP = 60_000;
