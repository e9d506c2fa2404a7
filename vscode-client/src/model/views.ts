// What part of each stack, and which samples, a view of the profile shows: the stacks as sampled;
// without the debugger ("Hide debugger"); from the outermost asyncio task frame on ("By task");
// with or without the samples of waiting tasks. The model (profile.ts) keeps one aggregate per
// combination in use, each fed the stack records through viewSlice.
//
// Which frames are the debugger's, which are tasks and in which state, the daemon says (a frame's
// origin and task); this only cuts the stacks where those frames are.

import type { Frame } from './protocol';
import type { StackTable } from './stacks';

/** Which samples of waiting tasks a view holds (a sample whose innermost task frame is not "running"). */
export type WaitingFilter = 'include' | 'exclude' | 'only';

/** A view of the profile: which part of each stack and which samples its trees and tables show. */
export interface ViewOptions {
  /** Each stack below its last debugger frame; a sample in the debugger itself is one node. */
  hideDebugger?: boolean;
  /** Each stack from its outermost task frame on, so that the roots are tasks; stacks without one as they are. */
  byTask?: boolean;
  /** Default 'include'. */
  waiting?: WaitingFilter;
}

/** The kind of a frame key, as the daemon classified the frame. */
export const PROGRAM_FRAME = 0;
export const DEBUGGER_FRAME = 1;
export const NATIVE_FRAME = 2;
/** A task frame whose task was running at that sample. */
export const RUNNING_TASK_FRAME = 3;
/** A task frame whose task was waiting, cancelling, or in a state unknown at that sample. */
export const OTHER_TASK_FRAME = 4;

export function frameKindOf(frame: Frame): number {
  if (frame.task !== undefined) return frame.task === 'running' ? RUNNING_TASK_FRAME : OTHER_TASK_FRAME;
  if (frame.origin === 'debugger') return DEBUGGER_FRAME;
  return frame.native === true ? NATIVE_FRAME : PROGRAM_FRAME;
}

const HIDE_DEBUGGER = 1;
const BY_TASK = 2;
const EXCLUDE_WAITING = 4;
const ONLY_WAITING = 8;

/** A view as a small number (0: the stacks as sampled), the key of its aggregate. */
export function viewMask(view: boolean | ViewOptions | undefined): number {
  if (typeof view !== 'object') return view === true ? HIDE_DEBUGGER : 0;
  let m = 0;
  if (view.hideDebugger === true) m |= HIDE_DEBUGGER;
  if (view.byTask === true) m |= BY_TASK;
  if (view.waiting === 'exclude') m |= EXCLUDE_WAITING;
  else if (view.waiting === 'only') m |= ONLY_WAITING;
  return m;
}

/** viewSlice's answer for a sample the view leaves out. */
export const SKIP = -1;
/** viewSlice's answer for a sample taken in the debugger itself: the one node of the debugger. */
export const IN_DEBUGGER = -2;

/**
 * The part of a stack record a view shows: where it starts in the pools (it always ends with the
 * stack), SKIP, or IN_DEBUGGER. O(depth).
 */
export function viewSlice(mask: number, st: StackTable, kind: readonly number[], rec: number): number {
  const line = st.line;
  let start = st.start[rec];
  const end = start + st.length[rec];
  if (mask & (EXCLUDE_WAITING | ONLY_WAITING)) {
    let i = end - 1;
    while (i >= start && kind[line[i]] !== RUNNING_TASK_FRAME && kind[line[i]] !== OTHER_TASK_FRAME) i--;
    const waiting = i >= start && kind[line[i]] === OTHER_TASK_FRAME;
    if (waiting ? mask & EXCLUDE_WAITING : mask & ONLY_WAITING) return SKIP;
  }
  if (mask & HIDE_DEBUGGER) {
    // The part after the last debugger frame, unless that is only native frames the debugger
    // called (a wait in its own thread, say), which count as the debugger's.
    let last = end - 1;
    while (last >= start && kind[line[last]] !== DEBUGGER_FRAME) last--;
    let python = last < start;
    for (let i = last + 1; i < end && !python; i++) python = kind[line[i]] !== NATIVE_FRAME;
    if (!python) return IN_DEBUGGER;
    start = last + 1;
  }
  if (mask & BY_TASK) {
    let i = start;
    while (i < end && kind[line[i]] !== RUNNING_TASK_FRAME && kind[line[i]] !== OTHER_TASK_FRAME) i++;
    if (i < end) start = i;
  }
  return start;
}
