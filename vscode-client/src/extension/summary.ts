// The summary of a finished run, as the daemon computed it: totals and its top functions. The
// extension only lays it out, in the columns of the daemon's own CLI summary
// (src/formats/summary.cpp, format_summary); it never ranks functions itself, so when the
// daemon gave none (the run failed, or the session ended first) only the totals are shown.

import * as vscode from 'vscode';
import type { FunctionStats, ProfilingSummary } from '../model/protocol';
import type { StoppedInfo } from '../webview/messages';

const nf = new Intl.NumberFormat('en-US');

/** "1,234 samples in 10.0 s, 2 read errors, 3 dropped" */
export function summaryText(s: ProfilingSummary): string {
  let t = `${nf.format(s.sampleCount)} samples in ${(s.duration / 1000).toFixed(1)} s`;
  if (s.errorCount) t += `, ${nf.format(s.errorCount)} read errors`;
  if (s.droppedSampleCount) t += `, ${nf.format(s.droppedSampleCount)} dropped`;
  return t;
}

const pad = (s: string, n: number) => s.padStart(n);

/**
 * The daemon's top functions as format_summary prints them:
 * `  %Own  %Total  OwnSmpl  TotSmpl  Function (file)`, percentages of the run's samples. Empty
 * when the daemon sent none.
 */
export function topFunctionsTable(s: ProfilingSummary): string[] {
  const top = s.topFunctions ?? [];
  if (top.length === 0) return [];
  const whole = s.sampleCount;
  const pct = (n: number) => pad((whole > 0 ? (100 * n) / whole : 0).toFixed(2), 6) + '%';
  const row = (f: FunctionStats) =>
    `  ${pct(f.self)} ${pct(f.total)} ${pad(String(Math.round(f.self)), 8)} ${pad(String(Math.round(f.total)), 8)}  ${f.function}${f.file ? ` (${f.file})` : ''}`;
  return [
    `Top functions by own samples (of ${Math.round(whole)} thread samples):`,
    `  ${pad('%Own', 7)} ${pad('%Total', 7)} ${pad('OwnSmpl', 8)} ${pad('TotSmpl', 8)}  Function (file)`,
    ...top.map(row),
  ];
}

/** The first of the top functions, for a one-line message: "work (41.2% own)". */
export function topFunctionText(s: ProfilingSummary): string | undefined {
  const f = s.topFunctions?.[0];
  if (!f || s.sampleCount <= 0) return undefined;
  return `${f.function} (${((100 * f.self) / s.sampleCount).toFixed(1)}% own)`;
}

/** The "dapprof" output channel, where every finished run's summary is written. */
export class SummaryLog implements vscode.Disposable {
  private channel: vscode.OutputChannel | undefined;

  /** Appends the run's summary; returns whether it holds top functions worth showing. */
  write(sessionName: string, stopped: StoppedInfo): boolean {
    const ch = (this.channel ??= vscode.window.createOutputChannel('dapprof'));
    const how = stopped.reason && stopped.reason !== 'stopProfiling' ? ` (${stopped.reason})` : '';
    ch.appendLine(`Profiling of "${sessionName}" stopped${how}: ${summaryText(stopped.summary)}.`);
    if (stopped.message) ch.appendLine(stopped.message);
    if (stopped.summary.outputPath) ch.appendLine(`Saved to ${stopped.summary.outputPath}`);
    const table = topFunctionsTable(stopped.summary);
    for (const line of table) ch.appendLine(line);
    ch.appendLine('');
    return table.length > 0;
  }

  show(): void {
    this.channel?.show(true);
  }

  dispose(): void {
    this.channel?.dispose();
  }
}

/** "Profiling stopped: totals. Top function: …", offering the flame graph, the daemon's table (in the output channel) and an export. */
export function announceStopped(s: ProfilingSummary, actions: { showFlameGraph(): void; showSummary(): void; export(): void }): void {
  const top = topFunctionText(s);
  const choices = ['Show Flame Graph', ...(top ? ['Show Summary'] : []), 'Export…'];
  void vscode.window.showInformationMessage(`Profiling stopped: ${summaryText(s)}.${top ? ` Top function: ${top}.` : ''}`, ...choices).then((choice) => {
    if (choice === 'Show Flame Graph') actions.showFlameGraph();
    else if (choice === 'Show Summary') actions.showSummary();
    else if (choice === 'Export…') actions.export();
  });
}
