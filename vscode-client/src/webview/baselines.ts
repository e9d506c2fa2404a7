// What the page can compare the shown run with (diff.ts draws the comparison): the runs it
// showed before, a few, each kept as its model (bounded: its distinct stacks and timeline, never
// the bodies it was fed, which grow by every batch of an hour-long run); and the profile the
// extension last gave (a file's, a kept run's), to pick again.

import { ProfileModel } from '../model/profile';
import type { ProfilingDataBody } from '../model/protocol';
import { FILE_BASELINE } from './toolbar';

/** How many earlier runs the page keeps to compare with. */
const KEPT_RUNS = 5;

export interface Baseline {
  model: ProfileModel;
  label: string;
  /** Its place in the toolbar's list: an index of the earlier runs, FILE_BASELINE, or -1. */
  index: number;
}

export class Baselines {
  /** The earlier runs, oldest first. */
  private readonly runs: Array<{ label: string; model: ProfileModel }> = [];
  private given: { label: string; model: ProfileModel } | null = null;
  /** The choice in effect (a Baseline's index; -1: none). */
  private index = -1;

  /** @param show lists the choices in the toolbar: the runs' labels, the one in effect, the given one's label */
  constructor(private readonly show: (labels: string[], current: number, givenLabel?: string) => void) {}

  /** A run the page stops showing becomes one to compare with. */
  keepRun(label: string, model: ProfileModel): void {
    this.runs.push({ label, model });
    if (this.runs.length > KEPT_RUNS) {
      this.runs.shift();
      if (this.index >= 0) this.index--;
    }
    this.refresh();
  }

  /** The toolbar's choice `i`; null for none. */
  choice(i: number): Baseline | null {
    if (i === FILE_BASELINE) return this.given && { ...this.given, index: FILE_BASELINE };
    return i >= 0 && this.runs[i] ? { ...this.runs[i], index: i } : null;
  }

  /** The extension's baseline (the bodies of a profile file or a kept run), or none (null). */
  give(label: string, bodies: readonly ProfilingDataBody[] | null): Baseline | null {
    this.given = bodies === null ? null : { label, model: ProfileModel.of(bodies) };
    return this.choice(FILE_BASELINE);
  }

  /** The baseline in effect now (null: none), as the toolbar shows it. */
  chose(b: Baseline | null): void {
    this.index = b === null ? -1 : b.index;
    this.refresh();
  }

  private refresh(): void {
    this.show(this.runs.map((r) => r.label), this.index, this.given?.label);
  }
}
