import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { SessionLayout } from '../layout';
import type { SessionState } from '../session/state';
import { claimsStatus } from '../verify/sessionClaims';
import { makePatch, type WorkspacePatch } from '../workspace/patch';

/** What a {@link SubmitWarning} is about. */
export type SubmitWarningKind = 'claims-not-produced' | 'generated-files' | 'no-script' | 'never-run';

/** One reason to think twice before submitting; the submission goes ahead when the user says so. */
export interface SubmitWarning {
  kind: SubmitWarningKind;
  /** One line, naming what was checked and what was found. */
  message: string;
  /** The claims' texts or the files' workspace-relative paths it is about. */
  items: string[];
}

/** Slack after a run's end when telling whether a file was written during it, ms (the run's end is taken when its log closes). */
export const RUN_WINDOW_SLACK_MS = 2_000;

/**
 * The warnings shown before Submit (each with "Submit anyway"), checked on the session as it is:
 * - `claims-not-produced`: numbers of the conclusion that no run produced, neither found nor
 *   derived (the verifier's numbers check over the runs so far: src/core/verify/sessionClaims.ts);
 * - `generated-files`: files added to the patch that a run wrote (their mtime lies within a
 *   run's span, from its start to its end + {@link RUN_WINDOW_SLACK_MS}), and added binary files:
 *   kept in the patch as the harness keeps untracked outputs, but usually not meant to be part of it;
 * - `no-script`: no regular file `reproduce_exp_bench.sh` at the workspace root (E fails);
 * - `never-run`: the script was never run in the work container.
 * `patch` defaults to `makePatch` of the workspace (the patch the submission writes).
 */
export async function submitWarnings(layout: SessionLayout, state: SessionState, patch?: WorkspacePatch): Promise<SubmitWarning[]> {
  const out: SubmitWarning[] = [];
  const [claims, p, script] = await Promise.all([
    state.conclusion.trim() ? claimsStatus(layout, state.conclusion) : undefined,
    patch ?? makePatch(layout.workspace),
    fsp.lstat(layout.script).catch(() => undefined),
  ]);
  const missing = (claims?.claims ?? []).filter((c) => !c.found && !c.derived && c.status !== 'derived').map((c) => c.text);
  if (missing.length) {
    out.push({ kind: 'claims-not-produced', items: missing,
      message: `${missing.length} number${missing.length === 1 ? '' : 's'} of the conclusion no run produced (neither printed nor derived): ${missing.join(', ')}` });
  }
  const generated = await generatedFiles(layout, state, p);
  if (generated.length) {
    out.push({ kind: 'generated-files', items: generated.map((g) => g.path),
      message: `${generated.length} generated file${generated.length === 1 ? '' : 's'} in the patch: ${generated.map((g) => `${g.path} (${g.why})`).join(', ')}` });
  }
  if (!script?.isFile()) {
    out.push({ kind: 'no-script', items: ['reproduce_exp_bench.sh'],
      message: `no reproduce_exp_bench.sh at the workspace root${script ? ' (not a regular file)' : ''}: the verifier will fail (E = false)` });
  }
  if (state.runs.length === 0) {
    out.push({ kind: 'never-run', items: [], message: 'reproduce_exp_bench.sh was never run in the work container' });
  }
  return out;
}

/** Added files of the patch that a run wrote or that are binary, with why. */
async function generatedFiles(layout: SessionLayout, state: SessionState, p: WorkspacePatch): Promise<Array<{ path: string; why: string }>> {
  const spans = state.runs.map((r) => {
    const start = Date.parse(r.startedAt);
    return { id: r.id, from: start, to: start + r.durationMs + RUN_WINDOW_SLACK_MS };
  });
  const out: Array<{ path: string; why: string }> = [];
  for (const f of p.files) {
    if (f.status !== 'added') continue;
    const st = await fsp.stat(path.join(layout.workspace, f.path)).catch(() => undefined);
    const run = st && spans.find((s) => st.mtimeMs >= s.from && st.mtimeMs <= s.to);
    if (run) out.push({ path: f.path, why: `written during run ${run.id}` });
    else if (f.binary) out.push({ path: f.path, why: 'binary' });
  }
  return out;
}
