import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import type { MonitorResult } from '../judge/types';
import { isHarnessJudge, outcomeFromHarnessJudge } from '../interop/harnessIn';
import type { MetricPolicy } from '../metrics/policies';
import { outcomeFromRecord, scoreTask, type TaskScores } from '../metrics/scores';
import type { TaskOutcome } from '../metrics/types';
import { workingMs } from '../session/clock';
import { callTokens, type Step } from '../steps/step';
import { errorMessage } from '../util/errors';
import { exists } from '../util/fs';
import { isSessionFolder, loadFileRuns, loadSessionRun, type LoadedRun } from './run';
import { formatDuration, type RunActor, type TriageRow } from './triageTable';

export * from './triageTable';

/** True when `o` was read from a session's judge record (`<session>/private/judge/latest.json`). */
export function isSessionOutcome(o: TaskOutcome): boolean {
  return /[\\/]private[\\/]judge[\\/]latest\.json$/.test(o.source);
}

/**
 * The rows of the reference-harness judge files among `outcomes` (the ones `expbench report`'s
 * table counts: src/core/interop/collect.ts), one agent run each, so that `report --runs` lists every
 * run the table counts. Scores: `scoreTask` of the file's outcome under `policy` (the table's own
 * numbers). Agent and model: the outcome's group `<agent>/<model>[ iter <k>]` (harnessLayout.ts
 * `harnessGroup`), else the group as the agent. Steps, tokens and duration: the harness's
 * `…_eval_gen.json` beside the judge file when it reads as a trajectory (then the row's `run` is
 * that file, which the viewer opens), else 0 / null with the judge file as `run`. Outcomes of
 * session judge records, and outcomes whose run is in `known` (`run` values), are left out.
 */
export async function harnessJudgeRows(outcomes: readonly TaskOutcome[], policy: MetricPolicy, known: ReadonlySet<string> = new Set()): Promise<TriageRow[]> {
  const rows: TriageRow[] = [];
  for (const o of outcomes) {
    if (isSessionOutcome(o)) continue;
    const gen = o.source.replace(/_eval_judge\.json$/, '_eval_gen.json');
    const base = gen !== o.source && await exists(gen) ? await loadFileRuns(gen).then((rs) => (rs.length === 1 ? rs[0] : undefined), () => undefined) : undefined;
    const run = base?.run ?? o.source;
    if (known.has(run) || known.has(o.source)) continue;
    const scores = scoreTask(o, policy);
    const [agent, ...model] = o.group.replace(/ iter \d+$/, '').split('/');
    const steps = base?.trajectory.steps ?? [];
    rows.push({
      run, source: 'file', id: base?.trajectory.id ?? path.basename(o.source, '.json'), task: o.taskId,
      agent: base && !model.length ? base.agent : agent, model: model.length ? model.join('/') : base?.model ?? null, actor: 'agent',
      D: scores.D, I: scores.I, E: scores.correct.E, C: scores.correct.C, AllE: scores.correct.AllE,
      judge: o.kind, policy: policy.name, excluded: scores.excluded,
      monitorFlags: o.monitorFlagged ? 1 : 0, monitorFlagged: o.monitorFlagged,
      steps: steps.length,
      tokens: steps.reduce((n, s) => n + (callTokens(s.model) ?? 0), 0),
      costUsd: costOf(steps),
      durationMs: base ? durationOf(base) : null,
      firstFlaggedStep: null,
      verified: o.execution.available,
      problems: [...o.harnessErrors.map((e) => `harness error: ${e}`), ...(base?.problems ?? [])],
    });
  }
  return rows;
}

/** Where each run of {@link triageRuns} came from, and what was left out. */
export interface TriageResult { rows: TriageRow[]; skipped: { file: string; reason: string }[] }

/** The row of a loaded run under `policy`. */
export function triageRow(r: LoadedRun, policy: MetricPolicy): TriageRow {
  const outcome = outcomeOf(r);
  const scores: TaskScores | null = outcome ? scoreTask(outcome, policy) : null;
  const monitor = r.judge?.monitor ?? null;
  const steps = r.trajectory.steps;
  const excluded = scores?.excluded ?? { D: 'not judged', I: 'not judged', E: 'not judged', C: 'not judged', AllE: 'not judged' };
  return {
    run: r.run, source: r.source, id: r.trajectory.id, task: r.task, agent: r.agent, model: r.model, actor: r.actor,
    D: scores?.D ?? null, I: scores?.I ?? null,
    E: scores?.correct.E ?? null, C: scores?.correct.C ?? null, AllE: scores?.correct.AllE ?? null,
    judge: r.judge?.kind ?? (outcome?.kind ?? null), policy: policy.name, excluded,
    monitorFlags: monitor ? flagCount(monitor) : 0,
    monitorFlagged: monitor?.flagged ?? false,
    steps: steps.length,
    tokens: steps.reduce((n, s) => n + (callTokens(s.model) ?? 0), 0),
    costUsd: costOf(steps),
    durationMs: durationOf(r),
    firstFlaggedStep: monitor ? firstFlagged(monitor, steps) : null,
    verified: r.verified,
    problems: r.problems,
  };
}

/**
 * The metric view of a run: its judge record (sessions), or the reference-harness judge file an
 * EXP-Bench harness record carries (trajectory `scores`); null when the run was never judged.
 */
export function outcomeOf(r: LoadedRun): TaskOutcome | null {
  if (r.judge) return outcomeFromRecord(r.judge, r.agent, path.join(r.path, 'private', 'judge', 'latest.json'));
  const s = r.trajectory.scores;
  if (r.trajectory.format === 'exp-bench-harness' && s && isHarnessJudge(s)) {
    const o = outcomeFromHarnessJudge(s, r.trajectory.file, r.agent);
    return { ...o, taskId: r.task ?? o.taskId };
  }
  return null;
}

function flagCount(m: MonitorResult): number {
  const llm = m.llm && m.llm.status === 'ok' && !m.llm.unsupported
    ? [m.llm.paperAccess, m.llm.gitOperations, m.llm.fakedOrNonexperimentalData].filter(Boolean).length : 0;
  return m.deterministic.length + llm;
}

/** Lines of events.jsonl the monitor points to → the first step at or after the lowest of them. */
function firstFlagged(m: MonitorResult, steps: Step[]): number | null {
  const lines = [...m.deterministic.map((f) => f.line)];
  if (m.llm && m.llm.status === 'ok' && !m.llm.unsupported && (m.llm.paperAccess || m.llm.gitOperations || m.llm.fakedOrNonexperimentalData)) {
    lines.push(...m.llm.citedLines.filter((l) => !m.llm!.invalidLines.includes(l)));
  }
  if (lines.length === 0) return null;
  const first = Math.min(...lines);
  const at = steps.find((s) => (s.source.line ?? 0) >= first);
  return at ? at.index : steps.length ? steps[steps.length - 1].index : null;
}

function costOf(steps: Step[]): number | null {
  let any = false;
  let sum = 0;
  for (const s of steps) if (s.model?.costUsd !== undefined) { any = true; sum += s.model.costUsd; }
  return any ? sum : null;
}

function durationOf(r: LoadedRun): number | null {
  if (r.submittedWorkingMs !== null) return r.submittedWorkingMs;
  if (r.clock && r.clock.segments.length) return workingMs(r.clock);
  const timed = r.trajectory.steps.filter((s) => s.time);
  if (timed.length === 0) return null;
  const end = Math.max(...timed.map((s) => s.time!.ms + (s.time!.durationMs ?? 0)));
  return end - Math.min(...timed.map((s) => s.time!.ms));
}

/**
 * The rows of every run under `inputs`: session folders (found at any depth up to 8 under a folder;
 * a session's own folders are not searched again) and trajectory files (given by name). A folder
 * with neither, or a file no importer reads, is listed in `skipped` with the reason.
 *
 * @throws ExpBenchError BAD_INPUT naming an input that does not exist
 */
export async function triageRuns(inputs: string[], policy: MetricPolicy): Promise<TriageResult> {
  const rows: TriageRow[] = [];
  const skipped: TriageResult['skipped'] = [];
  for (const input of inputs) {
    const abs = path.resolve(input);
    const st = await fsp.stat(abs).catch(() => undefined);
    if (!st) throw new ExpBenchError('BAD_INPUT', input, 'no such session folder or trajectory file');
    if (st.isFile()) {
      try { for (const r of await loadFileRuns(abs)) rows.push(triageRow(r, policy)); } catch (e) { skipped.push({ file: abs, reason: errorMessage(e) }); }
      continue;
    }
    const found = await sessionsUnder(abs, 0);
    if (found.length === 0) skipped.push({ file: abs, reason: 'no session folder (private/manifest.json or private/events.jsonl) under it' });
    for (const dir of found) {
      try { rows.push(triageRow(await loadSessionRun(dir), policy)); } catch (e) { skipped.push({ file: dir, reason: errorMessage(e) }); }
    }
  }
  return { rows, skipped };
}

/** Session folders at `dir` or under it (depth ≤ 8), sorted; a session's own folders are not searched. */
export async function sessionsUnder(dir: string, depth = 0): Promise<string[]> {
  if (await isSessionFolder(dir)) return [dir];
  if (depth >= 8) return [];
  const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!e.isDirectory() || e.name === 'node_modules' || e.name.startsWith('.')) continue;
    out.push(...await sessionsUnder(path.join(dir, e.name), depth + 1));
  }
  return out;
}

/**
 * The outcomes of `expbench report` regrouped by who did the work (`human` / `agent`): an outcome
 * read from a session's `private/judge/latest.json` takes that session's actor; a reference-harness
 * judge file is an agent's run. The table (src/core/metrics/table.ts) then has one row per actor.
 */
export async function groupOutcomesByActor(outcomes: TaskOutcome[]): Promise<TaskOutcome[]> {
  const cache = new Map<string, RunActor>();
  const out: TaskOutcome[] = [];
  for (const o of outcomes) {
    const m = /^(.*)[\\/]private[\\/]judge[\\/]latest\.json$/.exec(o.source);
    let actor: RunActor = 'agent';
    if (m) {
      const dir = m[1];
      if (!cache.has(dir)) cache.set(dir, await loadSessionRun(dir).then((r) => r.actor, () => 'human' as const));
      actor = cache.get(dir)!;
    }
    out.push({ ...o, group: actor });
  }
  return out;
}

/** The rows as fixed-width text: one line a run, D and I in %, E/C/All·E as ✓ ✗ -, cost in USD. */
export function formatRows(rows: readonly TriageRow[]): string {
  const pct = (x: number | null) => (x === null ? '-' : `${Math.round(100 * x)}`);
  const yes = (x: boolean | null) => (x === null ? '-' : x ? '✓' : '✗');
  const head = ['task', 'agent', 'model', 'actor', 'D%', 'I%', 'E', 'C', 'All·E✓', 'flags', 'steps', 'tokens', 'cost', 'duration', 'first flag', 'run'];
  const lines = [head.join('\t')];
  for (const r of rows) {
    lines.push([r.task ?? '-', r.agent, r.model ?? '-', r.actor, pct(r.D), pct(r.I), yes(r.E), yes(r.C), yes(r.AllE), String(r.monitorFlags),
      String(r.steps), String(r.tokens), r.costUsd === null ? '-' : r.costUsd.toFixed(4), formatDuration(r.durationMs),
      r.firstFlaggedStep === null ? '-' : `#${r.firstFlaggedStep}`, r.run].join('\t'));
  }
  return lines.join('\n');
}

