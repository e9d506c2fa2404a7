// Redraws at most once per animation frame: a burst of batches, or of UI changes, in one task
// requests one frame and is drawn once in it.

export class FrameScheduler {
  /** Animation frames requested (tests read it). */
  requests = 0;
  private requested = false;

  constructor(private readonly draw: () => void) {}

  invalidate(): void {
    if (this.requested) return;
    this.requested = true;
    this.requests++;
    requestAnimationFrame(() => {
      this.requested = false;
      this.draw();
    });
  }
}
