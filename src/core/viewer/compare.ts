import { ExpBenchError } from '../errors';
import type { JudgeRecord } from '../judge/types';
import type { MetricPolicy } from '../metrics/policies';
import type { ClockState } from '../session/state';
import { PHASES, type Phase } from '../steps/phases';
import type { Step } from '../steps/step';
import { loadRun, type LoadedRun } from './run';
import { triageRow, type TriageRow } from './triage';

/** One step as a comparison shows it: its index (for `expbench.trajectory.open`), what it is, one line. */
export interface StepBrief {
  index: number;
  kind: Step['kind'];
  actor: Step['actor'];
  /** ms after the run's first timed step; null when untimed. */
  relMs: number | null;
  label: string;
}

/** One phase of both runs: working time in it and its steps, side by side. */
export interface PhaseBlock {
  phase: Phase;
  /** Working time in the phase, ms (see {@link phaseTimes}); null when the run has no times. */
  leftMs: number | null;
  rightMs: number | null;
  left: StepBrief[];
  right: StepBrief[];
}

/** A judge verdict of one run on one item. */
export interface ItemVerdict { verdict: string | null; reason: string }

/** One judge item (`design:<variable>`, `requirement:<n>`, `conclusion`) of both runs. */
export interface VerdictPair { item: string; label: string; left: ItemVerdict | null; right: ItemVerdict | null }

/** Two runs of one task side by side (issue 17, item 6). */
export interface Comparison {
  task: string | null;
  policy: string;
  left: TriageRow;
  right: TriageRow;
  phases: PhaseBlock[];
  verdicts: VerdictPair[];
}

/**
 * Compares two runs of one task (sessions or trajectory files, as {@link loadRun} names them):
 * their triage rows (scores from the metrics room under `policy`), working time per phase, steps
 * grouped by phase, and the judge's verdicts per item.
 *
 * @throws ExpBenchError BAD_INPUT naming the right run when the two runs are of different tasks
 *   (or only one says its task); what {@link loadRun} throws
 */
export async function compareRuns(left: string, right: string, policy: MetricPolicy): Promise<Comparison> {
  const [l, r] = await Promise.all([loadRun(left), loadRun(right)]);
  return compareLoaded(l, r, policy);
}

/** {@link compareRuns} on runs already read. */
export function compareLoaded(l: LoadedRun, r: LoadedRun, policy: MetricPolicy): Comparison {
  if (l.task !== r.task) {
    throw new ExpBenchError('BAD_INPUT', r.run, `the two runs are of different tasks (${l.task ?? 'unknown task'} and ${r.task ?? 'unknown task'}): compare two runs of one task`);
  }
  const lt = phaseTimes(l.trajectory.steps, l.clock);
  const rt = phaseTimes(r.trajectory.steps, r.clock);
  const phases = PHASES.map((phase) => ({
    phase, leftMs: lt?.[phase] ?? null, rightMs: rt?.[phase] ?? null,
    left: l.trajectory.steps.filter((s) => s.phase === phase).map(brief),
    right: r.trajectory.steps.filter((s) => s.phase === phase).map(brief),
  }));
  return { task: l.task, policy: policy.name, left: triageRow(l, policy), right: triageRow(r, policy), phases, verdicts: pairVerdicts(l.judge, r.judge) };
}

/**
 * Working time per phase, ms: each timed step's phase holds from its time to the next timed
 * step's (the last: to the end of the clock's last segment, else its own end), counted only
 * inside the clock's working segments when there is a clock (pauses are not work), else in full.
 * Null when no step has a time.
 */
export function phaseTimes(steps: readonly Step[], clock: ClockState | null): Record<Phase, number> | null {
  const timed = steps.filter((s) => s.time);
  if (timed.length === 0) return null;
  const segs = clock?.segments.length
    ? clock.segments.map((s) => [Date.parse(s.start), Date.parse(s.end ?? s.lastBeat)] as const)
    : null;
  const last = timed[timed.length - 1].time!;
  const end = segs ? Math.max(last.ms, ...segs.map((s) => s[1])) : last.ms + (last.durationMs ?? 0);
  const out = Object.fromEntries(PHASES.map((p) => [p, 0])) as Record<Phase, number>;
  for (let i = 0; i < timed.length; i++) {
    const a = timed[i].time!.ms;
    const b = i + 1 < timed.length ? timed[i + 1].time!.ms : end;
    if (b <= a) continue;
    out[timed[i].phase] += segs ? segs.reduce((n, [s, e]) => n + Math.max(0, Math.min(b, e) - Math.max(a, s)), 0) : b - a;
  }
  return out;
}

function brief(s: Step): StepBrief {
  return { index: s.index, kind: s.kind, actor: s.actor, relMs: s.time?.relMs ?? null, label: stepLabel(s) };
}

/** One line for a step: the command, the tool, the edited paths, else the first line of its text. */
export function stepLabel(s: Step): string {
  const line = (t: string) => (t.split('\n').find((x) => x.trim()) ?? '').slice(0, 160);
  if (s.action?.command) return `${s.action.tool}: ${line(s.action.command)}`;
  if (s.edits?.length) return `${s.edits[0].op ?? 'edit'} ${s.edits.map((e) => e.path).join(', ')}`;
  if (s.action) return s.action.tool;
  if (s.kind === 'model') return `${s.model?.model ?? 'model'}${s.text ? `: ${line(s.text)}` : ''}`;
  return line(s.text ?? s.kind);
}

/** The judge items of both records (design variables, requirements in order, the conclusion). */
export function pairVerdicts(l: JudgeRecord | null, r: JudgeRecord | null): VerdictPair[] {
  const items = new Map<string, VerdictPair>();
  const put = (side: 'left' | 'right', item: string, label: string, v: ItemVerdict) => {
    const p = items.get(item) ?? { item, label, left: null, right: null };
    p[side] = v;
    items.set(item, p);
  };
  for (const [side, rec] of [['left', l], ['right', r]] as const) {
    if (!rec) continue;
    for (const d of rec.design.verdicts) put(side, `design:${d.variable}`, `design: ${d.variable} (${d.role})`, { verdict: d.verdict, reason: d.reason });
  }
  for (const [side, rec] of [['left', l], ['right', r]] as const) {
    if (!rec) continue;
    for (const q of rec.implementation.verdicts) put(side, `requirement:${q.index}`, `requirement ${q.index}: ${q.requirement.slice(0, 120)}`, { verdict: q.verdict ?? q.status, reason: q.reason });
  }
  for (const [side, rec] of [['left', l], ['right', r]] as const) {
    if (rec) put(side, 'conclusion', 'conclusion', { verdict: rec.conclusion.verdict ?? rec.conclusion.status, reason: rec.conclusion.reason });
  }
  return [...items.values()];
}
