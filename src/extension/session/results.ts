import * as path from 'node:path';
import { JudgeRecord } from '../../core/judge/types';
import type { SessionLayout } from '../../core/layout';
import { readJsonIfExists } from '../../core/util/fs';
import { VerificationRecordSchema } from '../../core/verify/record';
import type { PhasesView } from '../../protocol/messages';
import { errorMessage } from '../../core/util/errors';

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${Math.round(x * 100)}%`);

/**
 * The results table under Submit: the verifier's signals (E_clean, E_exit, claims) and the
 * judge's per-phase results, each labelled with its kind (`heuristic` or the model) so that
 * heuristic verdicts are never mistaken for LLM ones. Unreadable records become a row saying so.
 */
export async function resultRows(layout: SessionLayout): Promise<PhasesView['results']> {
  const rows: PhasesView['results'] = [];
  try {
    const raw = await readJsonIfExists(path.join(layout.verify, 'latest.json'));
    if (raw !== undefined) {
      const r = VerificationRecordSchema.parse(raw);
      const found = r.E_claims.claims.filter((c) => c.found).length;
      rows.push({ label: `E (${r.mode})`, value: (r.mode === 'clean' ? r.E_clean : r.E_exit) ? 'pass' : 'fail', ok: !!(r.mode === 'clean' ? r.E_clean : r.E_exit),
        detail: r.error ? r.error.message : r.timedOut ? 'timed out' : `exit ${r.exitCode}, ${((r.durationMs ?? 0) / 1000).toFixed(1)} s` });
      const derived = r.E_claims.claims.filter((c) => c.status === 'derived');
      rows.push({ label: 'Claims produced by the run', value: `${found}/${r.E_claims.claims.length}${derived.length ? ` (+${derived.length} derived)` : ''}`,
        ok: r.E_claims.claims.length ? (r.E_claims.allProduced ?? r.E_claims.allFound) : null,
        detail: [...derived.map((c) => `derived: ${c.text} (${c.derived?.op} of ${c.derived?.sources.map((s) => s.text).join(' and ')})`),
          ...r.E_claims.claims.filter((c) => !c.found && c.status !== 'derived').map((c) => `not found: ${c.text}`)].join('; ') || undefined });
      for (const l of r.lint) rows.push({ label: 'Script lint', value: l.severity, ok: l.severity === 'error' ? false : null, detail: l.message });
    }
  } catch (e) {
    rows.push({ label: 'Verifier', value: 'unreadable record', ok: false, detail: errorMessage(e) });
  }
  try {
    const raw = await readJsonIfExists(path.join(layout.judge, 'latest.json'));
    if (raw !== undefined) {
      const j = JudgeRecord.parse(raw);
      const by = j.kind === 'heuristic' ? 'heuristic' : j.model ?? 'LLM';
      rows.push({ label: `D design (${by})`, value: j.design.status === 'ok' ? pct(j.design.recall) : j.design.status, ok: null,
        detail: `${j.design.counts.matched} matched, ${j.design.counts.partial} partial, ${j.design.counts.missing} missing; precision ${pct(j.design.precision)}` });
      rows.push({ label: `I implementation (${by})`, value: j.implementation.status === 'ok' ? pct(j.implementation.score) : j.implementation.status, ok: null,
        detail: `${j.implementation.counts.met} met, ${j.implementation.counts.partial} partial, ${j.implementation.counts.unmet} unmet, ${j.implementation.counts.unverifiable} unverifiable${j.implementation.basis === 'method' ? ' (judged against the method: type 3)' : ''}` });
      rows.push({ label: `C conclusion (${by})`, value: j.conclusion.verdict ?? j.conclusion.status, ok: j.conclusion.verdict === null ? null : j.conclusion.verdict === 'correct', detail: j.conclusion.reason });
      if (j.monitor.flagged) rows.push({ label: 'Monitor', value: 'flagged', ok: false, detail: j.monitor.deterministic.map((f) => `line ${f.line}: ${f.rule}`).join('; ') });
      for (const h of j.harnessErrors) rows.push({ label: 'Harness error', value: h.item, ok: false, detail: h.message });
    }
  } catch (e) {
    rows.push({ label: 'Judge', value: 'unreadable record', ok: false, detail: errorMessage(e) });
  }
  return rows;
}
