import type { WorkspacePatch } from '../../core/workspace/patch';
import type { PhasesView } from '../../protocol/messages';

/** The stepper's live patch summary. */
export type PatchSummary = NonNullable<PhasesView['patch']>;

/**
 * The stepper's summary of a workspace patch: exactly the files of `makePatch` (the patch the
 * submission writes, src/core/workspace/patch.ts), their line counts, and what is left out and why
 * (src/core/workspace/patchRule.ts). No rule of its own: shown = submitted.
 */
export function patchSummary(p: WorkspacePatch): PatchSummary {
  return {
    files: p.files.map((f) => ({ path: f.path, status: f.status, additions: f.additions, deletions: f.deletions, binary: f.binary })),
    additions: p.files.reduce((n, f) => n + f.additions, 0),
    deletions: p.files.reduce((n, f) => n + f.deletions, 0),
    ignored: p.ignoredFiles.length,
    leftOut: p.leftOut.map(({ path, reason, why }) => ({ path, reason, why })),
  };
}
