// The CodeLens above each sampled function of a Python file: its own and total share, and a click
// reveals its node in the flame graph. The frames give a function's name and the lines sampled in
// it, not its first line, so the lens goes on the `def` (or `class`) of that name at or above the
// first sampled line.

import * as vscode from 'vscode';
import { FileHeat, FunctionHeat, heatText, waitingText } from '../model/source-heat';
import type { RevealTarget } from './line-heat';

export class HeatLenses implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(
    private readonly fileOf: (doc: vscode.TextDocument) => (FileHeat & { file: string }) | undefined,
    private readonly sampleCount: () => number,
    /** Milliseconds a sample stands for, for waiting time (undefined: unknown). */
    private readonly msPerSample: () => number | undefined = () => undefined,
  ) {}

  dispose(): void {
    this.changed.dispose();
  }

  refresh(): void {
    this.changed.fire();
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const fh = this.fileOf(doc);
    if (fh === undefined) return [];
    const n = this.sampleCount(), ms = this.msPerSample();
    const lenses: vscode.CodeLens[] = [];
    for (const f of fh.functions.values()) {
      if (f.total <= 0 && f.waiting <= 0) continue;
      const line = defLine(doc, f);
      if (line === undefined) continue;
      const target: RevealTarget = { file: fh.file, function: f.function };
      lenses.push(
        new vscode.CodeLens(new vscode.Range(line, 0, line, 0), {
          title: `$(flame) ${heatText(f, n, ms)}`,
          tooltip: `${f.function}: ${f.own} own and ${f.total} total of ${n} samples${f.waiting > 0 ? `, ${waitingText(f.waiting, ms)} (waiting tasks)` : ''}. Click to show it in the flame graph.`,
          command: 'dapprof.revealInFlameGraph',
          arguments: [target],
        }),
      );
    }
    return lenses;
  }
}

/**
 * The 0-based line of a function's `def`: the nearest one of its name at or above its first
 * sampled line, else the first in the file; undefined for what has none (`<module>`, lambdas,
 * comprehensions).
 */
export function defLine(doc: vscode.TextDocument, f: FunctionHeat): number | undefined {
  // Python 3.11+ qualifies names (`Class.method`, `outer.<locals>.inner`): the last part is the def's.
  const name = f.function.slice(f.function.lastIndexOf('.') + 1);
  if (!/^[\p{L}_][\p{L}\p{N}_]*$/u.test(name)) return undefined;
  const re = new RegExp(`^\\s*(?:async\\s+def|def|class)\\s+${name}\\b`, 'u');
  const from = Math.min(f.line > 0 ? f.line - 1 : doc.lineCount - 1, doc.lineCount - 1);
  for (let l = from; l >= 0; l--) if (re.test(doc.lineAt(l).text)) return l;
  for (let l = from + 1; l < doc.lineCount; l++) if (re.test(doc.lineAt(l).text)) return l;
  return undefined;
}
