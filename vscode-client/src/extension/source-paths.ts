// Matching the daemon's frame paths with the editor's documents: a frame's file is the path the
// interpreter knows (absolute, or relative to the program's working directory), a document's the
// path VS Code opened. Both are compared as normalised real paths, so that a symlink or a `..`
// on either side still matches; realpath is asked once per path.

import { realpathSync } from 'fs';
import * as path from 'path';

export class SourcePaths {
  private readonly real = new Map<string, string>();

  /** @param base the directory of relative frame paths (the session's cwd), if known */
  constructor(private base: () => string | undefined = () => undefined) {}

  /** The key of a path: its real path when it exists, else its normalised absolute path. */
  key(file: string): string {
    let k = this.real.get(file);
    if (k !== undefined) return k;
    const abs = path.isAbsolute(file) ? path.normalize(file) : path.resolve(this.base() ?? '/', file);
    try {
      k = realpathSync.native(abs);
    } catch {
      k = abs;
    }
    this.real.set(file, k);
    return k;
  }

  /** Forgets what was resolved (a new run may have another working directory). */
  clear(): void {
    this.real.clear();
  }
}
