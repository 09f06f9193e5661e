import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { HARNESS_FILES, type SessionLayout } from '../layout';
import type { SessionEvent } from './events';
import type { SessionState } from './state';

/**
 * The `submitted` event of a submission (submit.ts), or of its repair (`recovered`: recorded by
 * a later opener because the submitting process stopped after `state.json` said submitted and
 * before the event; see {@link missingOutcome}).
 */
export function submittedEvent(layout: SessionLayout, o: { workingMs: number; patchBytes: number; script: boolean; commit?: string; recovered?: boolean }) {
  const rel = (p: string) => path.relative(layout.root, p).split(path.sep).join('/');
  return {
    type: 'submitted' as const, workingMs: o.workingMs, answers: rel(layout.answers), design: rel(path.join(layout.private, 'design.json')),
    patch: rel(path.join(layout.harness, HARNESS_FILES.patch)), patchBytes: o.patchBytes,
    script: o.script ? rel(path.join(layout.harness, HARNESS_FILES.script)) : null,
    ...(o.commit ? { commit: o.commit } : {}), ...(o.recovered ? { recovered: true } : {}),
  };
}

/**
 * The outcome event that `state` (submitted or given up) calls for and `events` lack, built from
 * what the submission left on disk (the harness patch's size, the script copy), or undefined
 * when it is there (or the state is not finished).
 */
export async function missingOutcome(layout: SessionLayout, state: SessionState, events: SessionEvent[]): Promise<Record<string, unknown> | undefined> {
  if (state.submitted && !events.some((e) => e.type === 'submitted')) {
    const size = async (f: string) => (await fsp.lstat(f).catch(() => undefined))?.size;
    const patchBytes = (await size(path.join(layout.harness, HARNESS_FILES.patch))) ?? 0;
    const script = (await size(path.join(layout.harness, HARNESS_FILES.script))) !== undefined;
    return submittedEvent(layout, { workingMs: state.submitted.workingMs, patchBytes, script, recovered: true });
  }
  if (state.gaveUp && !state.submitted && !events.some((e) => e.type === 'gave_up')) {
    return { type: 'gave_up', workingMs: state.gaveUp.workingMs, ...(state.gaveUp.reason ? { reason: state.gaveUp.reason } : {}), recovered: true };
  }
  return undefined;
}
