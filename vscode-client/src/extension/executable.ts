// Which dapprof the debug type runs, and whether it runs at all. A platform .vsix carries its own
// dapprof (bin/<platform>-<arch>/dapprof); `dapprof.path` overrides it; without either, dapprof
// is looked up on PATH. Before a session starts, the chosen file is run with --version, so a
// binary that cannot work here (not executable, another architecture, a missing library or too
// old a glibc, not dapprof at all) is reported with its reason instead of as a debug adapter
// that died.

import { execFile, ExecFileException } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** Where a platform .vsix keeps its dapprof, in VS Code's names of the targets (linux-x64). */
export function bundledExecutable(extensionPath: string, platform: string = process.platform, arch: string = process.arch): string {
  return path.join(extensionPath, 'bin', `${platform}-${arch}`, 'dapprof');
}

type FileState = 'ok' | 'missing' | 'not a file' | 'not executable';

function fileState(f: string): FileState {
  let st: fs.Stats;
  try {
    st = fs.statSync(f);
  } catch {
    return 'missing';
  }
  if (!st.isFile()) return 'not a file';
  try {
    fs.accessSync(f, fs.constants.X_OK);
  } catch {
    return 'not executable';
  }
  return 'ok';
}

function expandHome(p: string): string {
  return p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p;
}

const isPath = (p: string) => p.includes('/') || p.includes('\\');

/** Finds an executable: a path (with ~ expanded), or a name searched on PATH. */
export function findExecutable(setting: string, envPath = process.env.PATH ?? ''): string | undefined {
  const p = expandHome(setting.trim() || 'dapprof');
  if (isPath(p)) return fileState(p) === 'ok' ? path.resolve(p) : undefined;
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const f = path.join(dir, p);
    if (fileState(f) === 'ok') return f;
  }
  return undefined;
}

export type Origin = 'setting' | 'bundled' | 'PATH';

export interface Located {
  exe: string;
  origin: Origin;
}

const ORIGIN_TEXT: Record<Origin, string> = {
  setting: 'named by the setting dapprof.path',
  bundled: 'bundled with the extension',
  PATH: 'found on PATH',
};

/**
 * The dapprof to run: `setting` (a path or a name on PATH) when it is set, else the extension's
 * own, else `dapprof` on PATH. Throws an Error saying what is missing and what to do.
 */
export function locateDapprof(setting: string, extensionPath: string | undefined, envPath = process.env.PATH ?? ''): Located {
  const s = setting.trim();
  if (s) {
    const p = expandHome(s);
    if (isPath(p)) {
      const state = fileState(p);
      if (state === 'ok') return { exe: path.resolve(p), origin: 'setting' };
      const what = state === 'missing' ? 'was not found' : state === 'not a file' ? 'is not a file' : 'is not executable (chmod +x it)';
      throw new Error(`dapprof ${what} at "${s}" (setting dapprof.path). Correct the setting, or clear it to use the dapprof bundled with the extension.`);
    }
    const exe = findExecutable(p, envPath);
    if (exe) return { exe, origin: 'setting' };
    throw new Error(`"${s}" (setting dapprof.path) was not found on PATH. Install dapprof, or set "dapprof.path" to the dapprof executable.`);
  }
  if (extensionPath) {
    const bundled = bundledExecutable(extensionPath);
    const state = fileState(bundled);
    if (state === 'ok') return { exe: bundled, origin: 'bundled' };
    if (state !== 'missing')
      throw new Error(`The dapprof bundled with the extension (${bundled}) ${state === 'not a file' ? 'is not a file' : 'is not executable'}. Reinstall the extension, or set "dapprof.path" to a dapprof executable.`);
  }
  const exe = findExecutable('dapprof', envPath);
  if (exe) return { exe, origin: 'PATH' };
  throw new Error(
    `dapprof was not found: this installation of the extension has no dapprof of its own for ${process.platform}-${process.arch} ` +
      `(the linux-x64 .vsix has one), and there is none on PATH. Install dapprof, or set "dapprof.path" to the dapprof executable.`,
  );
}

/** ELF e_machine values of the architectures VS Code runs on, by Node's process.arch. */
const ELF_MACHINES: Record<string, number> = { x64: 62, arm64: 183, arm: 40, ia32: 3 };

function machineName(m: number): string {
  const arch = Object.entries(ELF_MACHINES).find(([, v]) => v === m)?.[0];
  return arch ? `${arch} (ELF machine ${m})` : `ELF machine ${m}`;
}

/** Why `exe` cannot run here, found from its first bytes; undefined when it looks runnable. */
function formatProblem(exe: string): string | undefined {
  const head = Buffer.alloc(20);
  let n = 0;
  try {
    const fd = fs.openSync(exe, 'r');
    try {
      n = fs.readSync(fd, head, 0, head.length, 0);
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    return `it cannot be read (${(e as NodeJS.ErrnoException).code ?? e})`;
  }
  if (n >= 2 && head[0] === 0x23 && head[1] === 0x21) return undefined; // "#!": a script
  if (n < 20 || head.readUInt32BE(0) !== 0x7f454c46) return 'it is not a program (neither an ELF executable nor a script)';
  const want = ELF_MACHINES[process.arch];
  const machine = head[5] === 2 ? head.readUInt16BE(18) : head.readUInt16LE(18);
  if (want !== undefined && machine !== want) return `it is a program for ${machineName(machine)}, not for this machine (${process.arch})`;
  return undefined;
}

const VERSION_TIMEOUT_MS = 15_000;

interface RunResult {
  error?: ExecFileException;
  stdout: string;
  stderr: string;
}

function run(exe: string, args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(exe, args, { timeout: VERSION_TIMEOUT_MS, maxBuffer: 1 << 20, encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ error: error ?? undefined, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

/** The last lines of a program's error output, for a message. */
function tail(stderr: string): string {
  const lines = stderr.trim().split('\n').filter((l) => l.trim());
  return lines.slice(-3).join(' / ');
}

/** Versions of the executables checked, by file identity: a changed file is checked again. */
const checked = new Map<string, string>();

/**
 * Runs `exe --version` and returns the line it printed ("dapprof 0.1.0 (commit ...)"), or throws
 * an Error that says what is wrong with `exe` and what to do about it.
 */
export async function checkDapprof(located: Located): Promise<string> {
  const { exe, origin } = located;
  let key = '';
  try {
    const st = fs.statSync(exe);
    key = `${exe}\0${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    // reported below
  }
  const known = checked.get(key);
  if (known) return known;
  const fail = (reason: string): never => {
    const remedy =
      origin === 'setting'
        ? 'Correct the setting dapprof.path, or clear it to use the dapprof bundled with the extension.'
        : origin === 'bundled'
          ? 'Reinstall the extension, or set "dapprof.path" to a dapprof that runs here.'
          : 'Reinstall dapprof, or set "dapprof.path" to a dapprof that runs here.';
    throw new Error(`The dapprof ${ORIGIN_TEXT[origin]} (${exe}) does not run: ${reason}. ${remedy}`);
  };
  const problem = formatProblem(exe);
  if (problem) fail(problem);
  const r = await run(exe, ['--version']);
  if (r.error) {
    const code = r.error.code;
    if (code === 'EACCES') fail('permission denied (is it executable, on a file system that allows running programs?)');
    // execve's ENOENT for a file that exists: its program interpreter (ld.so) or a script's is missing.
    if (code === 'ENOENT') fail('its program interpreter is missing (a binary for another C library or system?)');
    if (r.error.killed) fail(`"--version" did not answer within ${VERSION_TIMEOUT_MS / 1000} s`);
    const err = tail(r.stderr);
    if (/GLIBC_[\d.]+'? not found/.test(err)) fail(`it needs a newer glibc than this system's: ${err}`);
    if (/error while loading shared libraries/.test(err)) fail(`a library it needs is missing: ${err}`);
    fail(`"--version" failed (${typeof code === 'number' ? `exit code ${code}` : (code ?? r.error.message)})${err ? `: ${err}` : ''}`);
  }
  const line = r.stdout.split('\n')[0].trim();
  if (!/^dapprof \d+\.\d+/.test(line)) fail(`it is not dapprof: "--version" printed "${line.slice(0, 200)}"`);
  if (key) checked.set(key, line);
  return line;
}
