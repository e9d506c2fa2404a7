// The profilingData stream of one run, kept raw by the extension host. The stream itself is not
// aggregated here (the panel aggregates what it shows, line-heat.ts the shown run for the
// editor, both with src/model): the host forwards each batch to the panel and keeps the bodies, so that a panel opened late, or closed and re-opened, replays them through
// the same code path as live data. Status bar figures come from the batches' own counts.

import type { ProfilingDataBody } from '../model/protocol';

/**
 * Samples kept for a replay. A sample costs the host about 100-200 bytes (an array of frame IDs)
 * and as much again in the replay message, so this bounds one run to some tens of MB: 30 min at
 * 100 Hz of a single thread. With `stacks` a sample costs far less (a stack ID and count per run
 * of them), so the same bound holds more than it needs to. Past it the oldest samples go; their
 * frames, stacks and threads stay, since the protocol announces each only once per run.
 */
export const MAX_REPLAY_SAMPLES = 200_000;

export interface StreamTotals {
  sampleCount: number;
  duration: number;
  errorCount: number;
  droppedSampleCount: number;
  batches: number;
}

/** What a panel needs to show a run it did not see: the bodies, oldest first. */
export interface Replay {
  bodies: ProfilingDataBody[];
  /** Samples of the run left out of `bodies` (the oldest), 0 when none were. */
  omittedSamples: number;
}

export class RunStream {
  readonly totals: StreamTotals = { sampleCount: 0, duration: 0, errorCount: 0, droppedSampleCount: 0, batches: 0 };
  private readonly bodies: ProfilingDataBody[] = [];
  /** Frames and threads of the bodies whose samples were let go, replayed first. */
  private head: ProfilingDataBody | undefined;
  private kept = 0;
  private omitted = 0;

  constructor(private readonly maxSamples = MAX_REPLAY_SAMPLES) {}

  add(body: ProfilingDataBody): void {
    const t = this.totals;
    const n = samplesOf(body);
    t.sampleCount += n;
    t.duration += body.duration;
    t.errorCount += body.errorCount ?? 0;
    t.droppedSampleCount += body.droppedSampleCount ?? 0;
    t.batches++;
    this.bodies.push(body);
    this.kept += n;
    // The newest batch always stays, however big: a replay then shows at least what is current.
    while (this.kept > this.maxSamples && this.bodies.length > 1) this.letGo(this.bodies.shift()!);
  }

  replay(): Replay {
    return { bodies: this.head ? [this.head, ...this.bodies] : [...this.bodies], omittedSamples: this.omitted };
  }

  private letGo(body: ProfilingDataBody): void {
    const head = (this.head ??= { newFrames: {}, samples: [], sampleCount: 0, duration: 0, threads: {}, threadIds: [], droppedSampleCount: 0, errorCount: 0 });
    Object.assign(head.newFrames, body.newFrames);
    // Stacks too are announced once per run; the head carries no samples, so no stackIds.
    if (body.newStacks) Object.assign((head.newStacks ??= {}), body.newStacks);
    // So are instructions (opcodes); their counts go with the samples.
    if (body.newInstructions) Object.assign((head.newInstructions ??= {}), body.newInstructions);
    // Later announcements of a thread replace earlier ones, as in the stream.
    Object.assign(head.threads!, body.threads ?? {});
    // The run's read errors and dropped samples stay counted; its duration goes with the
    // samples, so that the rate the panel shows is the rate of what it shows.
    head.droppedSampleCount! += body.droppedSampleCount ?? 0;
    head.errorCount! += body.errorCount ?? 0;
    const n = samplesOf(body);
    this.kept -= n;
    this.omitted += n;
  }
}

/** The samples a body carries: one per frame-ID array, or a run's count per stack ID. */
export function samplesOf(body: ProfilingDataBody): number {
  let n = body.samples.length;
  for (const c of body.stackCounts ?? []) n += c;
  return n;
}
