// The running Python processes that the profile-only mode can attach to, as `dapprof ps --json`
// lists them, and the quick pick that chooses one. dapprof decides what is a Python process and
// whether it can be read (and, when not, what the user can do about it): the extension only
// shows its answer.

import { execFile } from 'child_process';
import * as vscode from 'vscode';

/** One entry of `dapprof ps --json`'s `processes`. */
export interface PythonProcess {
  pid: number;
  uid?: number;
  user?: string;
  command: string[];
  /** "3.11"; missing when dapprof could not tell. */
  version?: string;
  /** The process is the user's own. */
  own?: boolean;
  /** dapprof can read its memory; when not, `why` says how to get the permission. */
  readable: boolean;
  why?: string;
}

export interface ProcessItem extends vscode.QuickPickItem {
  process: PythonProcess;
}

/** The processes of `dapprof ps --json`'s output; throws an Error when it is not that. */
export function parsePs(stdout: string): PythonProcess[] {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch (e) {
    throw new Error(`"dapprof ps --json" printed something that is not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const list = (doc as { processes?: unknown } | null)?.processes;
  if (!Array.isArray(list)) throw new Error('"dapprof ps --json" printed no "processes" list');
  const out: PythonProcess[] = [];
  for (const p of list as Array<Record<string, unknown>>) {
    // An entry without a usable pid cannot be attached to; anything else missing only shows less.
    if (!p || !Number.isInteger(p.pid) || (p.pid as number) <= 0) continue;
    out.push({
      pid: p.pid as number,
      uid: typeof p.uid === 'number' ? p.uid : undefined,
      user: typeof p.user === 'string' ? p.user : undefined,
      command: Array.isArray(p.command) ? p.command.map(String) : [],
      version: typeof p.version === 'string' && p.version ? p.version : undefined,
      own: p.own === true,
      // Readable unless dapprof says otherwise: an older dapprof without the field could read all it listed.
      readable: p.readable !== false,
      why: typeof p.why === 'string' && p.why ? p.why : undefined,
    });
  }
  return out;
}

/** An argument as a shell would need it to be one word, for display only (nothing runs it). */
function shellWord(arg: string): string {
  if (arg !== '' && /^[\w@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The command line as shown: `$(` would be taken for an icon in a quick pick's texts. */
export function commandLine(command: readonly string[]): string {
  const line = command.map(shellWord).join(' ');
  return line.replace(/\$\(/g, '$\u200b(');
}

/** Text of an unreadable process's detail when dapprof gave no reason. */
export const NO_REASON = 'dapprof cannot read this process (no permission).';

/** The quick pick's items: the readable processes first (in dapprof's order), then the others. */
export function processItems(processes: readonly PythonProcess[]): ProcessItem[] {
  const ordered = [...processes.filter((p) => p.readable), ...processes.filter((p) => !p.readable)];
  return ordered.map((p) => {
    const parts = [p.user ?? (p.uid !== undefined ? `uid ${p.uid}` : undefined), p.version ? `Python ${p.version}` : undefined];
    if (!p.readable) parts.push('not readable');
    const item: ProcessItem = {
      label: `${p.pid}  ${commandLine(p.command) || '(no command line)'}`,
      description: parts.filter((x) => x).join(' · '),
      process: p,
    };
    if (!p.readable) item.detail = `$(lock) ${(p.why ?? NO_REASON).replace(/\$\(/g, '$\u200b(')}`;
    return item;
  });
}

const PS_TIMEOUT_MS = 20_000;

/** Runs `exe ps --json` (argv, no shell) and returns its processes, or throws with dapprof's reason. */
export function listPythonProcesses(exe: string): Promise<PythonProcess[]> {
  return new Promise((resolve, reject) => {
    execFile(exe, ['ps', '--json'], { timeout: PS_TIMEOUT_MS, maxBuffer: 16 << 20, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) {
        const err = String(stderr).trim().split('\n').filter((l) => l.trim()).slice(-3).join(' / ');
        const what = error.killed ? `did not answer within ${PS_TIMEOUT_MS / 1000} s` : `failed (${typeof error.code === 'number' ? `exit code ${error.code}` : error.message})`;
        reject(new Error(`"dapprof ps --json" ${what}${err ? `: ${err}` : ''}`));
        return;
      }
      try {
        resolve(parsePs(String(stdout)));
      } catch (e) {
        reject(e);
      }
    });
  });
}

/**
 * Asks the user for a Python process. Undefined when none was picked, or when the one picked
 * cannot be read: then dapprof's message on how to get the permission is shown as an error.
 */
export async function pickPythonProcess(processes: readonly PythonProcess[]): Promise<PythonProcess | undefined> {
  if (processes.length === 0) {
    void vscode.window.showInformationMessage('dapprof found no running Python process.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(processItems(processes), {
    title: 'dapprof: Profile Process',
    placeHolder: 'The Python process to profile (type to filter by ID, command line or user)',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) return undefined;
  if (!picked.process.readable) {
    void vscode.window.showErrorMessage(`Cannot profile process ${picked.process.pid}: ${picked.process.why ?? NO_REASON}`);
    return undefined;
  }
  return picked.process;
}
