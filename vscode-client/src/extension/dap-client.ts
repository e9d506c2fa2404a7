// A Debug Adapter Protocol client over a child process's stdin and stdout: what the extension
// needs to drive `dapprof stdio --profile-only` itself, for a profiling run that is not a VS Code
// debug session (profile-run.ts says why). Requests by command and arguments, answered by their
// response's body or rejected with its message; events to one listener; the process's end.

import { ChildProcess, spawn } from 'child_process';

interface Pending {
  resolve: (body: unknown) => void;
  reject: (e: Error) => void;
  command: string;
}

export interface DapMessage {
  type?: string;
  seq?: number;
  request_seq?: number;
  command?: string;
  event?: string;
  success?: boolean;
  message?: string;
  body?: { error?: { format?: string }; [key: string]: unknown };
}

export class DapClient {
  private readonly child: ChildProcess;
  private seq = 1;
  private readonly pending = new Map<number, Pending>();
  private buffer = Buffer.alloc(0);
  private stderr = '';
  private closed = false;
  /** Set once the process has ended: the reason, for a request made afterwards. */
  private endReason = '';

  /**
   * @param onEvent each event the adapter sends, in order
   * @param onExit the adapter's process ended (after every pending request was rejected)
   */
  constructor(
    exe: string,
    args: readonly string[],
    private readonly onEvent: (event: string, body: unknown) => void,
    private readonly onExit: (reason: string) => void,
  ) {
    // No shell: the executable and its arguments as they are.
    this.child = spawn(exe, [...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    // dapprof logs to stderr; the tail of it says why it ended, if it ended early.
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-2000)));
    this.child.on('error', (e) => this.end(`could not run ${exe}: ${e.message}`));
    this.child.on('exit', (code, signal) => this.end(`dapprof exited (${signal ?? `code ${code}`})${this.stderr.trim() ? `: ${this.stderr.trim().split('\n').pop()}` : ''}`));
    this.child.stdin!.on('error', () => undefined); // a write after its end: reported by 'exit'
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  request(command: string, args?: unknown): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error(this.endReason || 'the profiler has ended'));
    const seq = this.seq++;
    const json = JSON.stringify({ seq, type: 'request', command, ...(args === undefined ? {} : { arguments: args }) });
    // One write of header and body.
    this.child.stdin!.write(`Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
    return new Promise((resolve, reject) => this.pending.set(seq, { resolve, reject, command }));
  }

  /** Ends the adapter's process if it still runs (closing its stdin first, as a client that goes away). */
  kill(): void {
    if (this.closed) return;
    this.child.stdin!.end();
    this.child.kill('SIGTERM');
  }

  private read(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const match = /Content-Length:\s*(\d+)/i.exec(this.buffer.subarray(0, headerEnd).toString('ascii'));
      if (!match) {
        this.end('dapprof sent a message without Content-Length');
        this.kill();
        return;
      }
      const length = Number(match[1]);
      const start = headerEnd + 4;
      if (this.buffer.length < start + length) return;
      const text = this.buffer.subarray(start, start + length).toString('utf8');
      this.buffer = this.buffer.subarray(start + length);
      let message: DapMessage;
      try {
        message = JSON.parse(text) as DapMessage;
      } catch {
        continue;
      }
      this.dispatch(message);
    }
  }

  private dispatch(m: DapMessage): void {
    if (m.type === 'event' && typeof m.event === 'string') {
      this.onEvent(m.event, m.body);
    } else if (m.type === 'response' && typeof m.request_seq === 'number') {
      const p = this.pending.get(m.request_seq);
      if (!p) return;
      this.pending.delete(m.request_seq);
      // As VS Code's customRequest: the error's format (dapprof's message), else the response's message.
      if (m.success) p.resolve(m.body);
      else p.reject(new Error(m.body?.error?.format ?? m.message ?? `${p.command} failed`));
    }
  }

  private end(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.endReason = reason;
    for (const p of this.pending.values()) p.reject(new Error(reason));
    this.pending.clear();
    this.onExit(reason);
  }
}
