import * as vscode from 'vscode';
import { repoOf, resolveRun as resolveCoreRun, type RunSource, type RunSourceDeps } from '../../../core/flows/runAtStep';

export { repoOf, type RunSource };

/** The arguments every repository command takes (JSON-serialisable): a trajectory file or a session folder, a 0-based step. */
export interface StepArgs {
  uri: string;
  step: number;
  /** Which trajectory of a file holding several (Inspect samples): its id; default the first. */
  trajectory?: string;
}

/** What resolving a run needs from the extension (the configured datasets' tasks). */
export type SourceDeps = RunSourceDeps;

/** A path from a path, a `file:` URI string or a `vscode.Uri`. */
export function fsPathOf(u: string | vscode.Uri): string {
  if (typeof u !== 'string') return u.fsPath;
  return /^[a-z][\w+.-]*:/i.test(u) && !/^[a-z]:[\\/]/i.test(u) ? vscode.Uri.parse(u).fsPath : u;
}

/**
 * The run `args.uri` names: a session or a trajectory file on an EXP-Bench task (the core's
 * src/core/flows/runAtStep.ts `resolveRun`, which the CLI's `traj repo-at-step` uses too).
 */
export function resolveRun(args: StepArgs, deps: SourceDeps, signal?: AbortSignal): Promise<RunSource> {
  return resolveCoreRun(fsPathOf(args.uri), deps, { trajectoryId: args.trajectory, signal });
}
