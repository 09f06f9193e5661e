import { tooLarge } from './errors';

/**
 * Size limits on what the host takes from the solver's side: files of the workspace, its patch and
 * run logs, notes and drafts, and protocol lines. One table, so that every reader of the untrusted
 * room (read.ts) and every entry point (the session's edits, the channel, MCP) says the
 * same limit in its message. Bytes for files and lines, characters for text (measured as JSON:
 * the length the text takes in `state.json` and on the channel, so ordinary text counts each
 * character once and a control character counts as its escape).
 */
const MiB = 1024 * 1024;

export const LIMITS = {
  /** A workspace file the host reads whole (reproduce_exp_bench.sh, an output file a claim is checked in, a settings file). */
  workspaceFileBytes: 64 * MiB,
  /**
   * A patch (the frozen `harness/patch.diff`, an imported one). 64 MiB holds 25,000 added lines of
   * 2,600 characters each, far past any legitimate patch of that many lines.
   */
  patchBytes: 64 * MiB,
  /** How much of a run log the host reads back (the head and the tail past it). */
  logBytes: 16 * MiB,
  /**
   * The archive of the files a verify run changed (`changed.tar` of the run's output folder): the
   * wrapper's 500 files of at most 1 MiB each with their tar headers (a long name takes a few
   * blocks more) fit in 512 MiB (src/core/verify/container-io.ts).
   */
  changedArchiveBytes: 512 * MiB,
  /** A judge file `expbench report` reads (a judge record, a reference-harness judge file): a few KiB in practice. */
  judgeFileBytes: 16 * MiB,
  /** A settings file of the proctored editor the host reads back (JSON with comments). */
  settingsBytes: 1 * MiB,
  /** One MCP message: a stdio line or an HTTP body. */
  mcpMessageBytes: 4 * MiB,
  /** One note, characters (as JSON). */
  noteChars: 100_000,
  /**
   * All the notes of a session together, characters (as JSON: what they take in `state.json`,
   * rewritten whole on each change, and in the window's state). 4,000,000 holds 40 notes at the
   * limit of one, or thousands of ordinary ones.
   */
  notesTotalChars: 4_000_000,
  /** The conclusion draft, characters (as JSON). */
  conclusionChars: 200_000,
  /** The design draft, characters (as JSON: every field of it together). */
  designChars: 200_000,
} as const;

/** The length `value` takes as JSON, characters (the measure of the text limits of {@link LIMITS}). */
export function jsonLength(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

/**
 * Refuses `value` when it is longer than `maxChars` as JSON ({@link jsonLength}).
 * @throws ExpBenchError `BAD_INPUT` naming `input` ({@link tooLarge}): its length and the limit
 */
export function assertTextWithin(input: string, what: string, value: unknown, maxChars: number): void {
  const n = jsonLength(value);
  if (n > maxChars) throw tooLarge(input, what, n, maxChars, 'characters');
}
