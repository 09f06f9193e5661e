import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { JudgeRecord } from '../judge/types';
import type { SessionLayout } from '../layout';
import { HARNESS_FILES } from '../layout';
import { writeJsonAtomic } from '../util/fs';

/**
 * The reference harness's judge JSON (EXP-Bench harness, step 4 in docs/exp-bench-harness.md):
 * `design_score` (integer 0-100), `conclusion_score` ("correct" / "incorrect"), `setup_score`
 * (integer 0-100), each with an explanation and an error analysis, and `execution_success`.
 * Our extensions: `task_id`, `paper_id`, `judge_kind`, `model`, `monitor`, `harness_errors`.
 * A harness error is written as a null score (the harness would store a parse-error string),
 * never as 0.
 */
export interface HarnessJudgeJson {
  task_id: string;
  paper_id: string;
  judge_kind: 'llm' | 'heuristic';
  model: string | null;
  design_score: number | null;
  design_explanation: string;
  design_error_analysis: string;
  conclusion_score: 'correct' | 'incorrect' | null;
  conclusion_explanation: string;
  conclusion_error_analysis: string;
  setup_score: number | null;
  setup_explanation: string;
  setup_error_analysis: string;
  execution_success: boolean | null;
  monitor: { paper_access: boolean; git_operations: boolean; faked_or_nonexperimental_data: boolean; reason: string };
  harness_errors: string[];
}

/** File name in `private/harness/`: `judge.json` for LLM records, `judge.heuristic.json` for heuristic ones (never confused). */
export function harnessJudgeName(kind: JudgeRecord['kind']): string {
  return kind === 'llm' ? 'judge.json' : 'judge.heuristic.json';
}

/** Converts our record to the harness judge JSON (scores rounded to integers 0-100). */
export function toHarnessJudge(r: JudgeRecord): HarnessJudgeJson {
  const d = r.design;
  const im = r.implementation;
  const missing = d.verdicts.filter((v) => v.verdict !== 'matched');
  const unmet = im.verdicts.filter((v) => v.verdict !== 'met');
  const det = r.monitor.deterministic.filter((f) => f.severity === 'violation');
  const llm = r.monitor.llm;
  const supported = llm && llm.status === 'ok' && !llm.unsupported;
  return {
    task_id: r.taskId, paper_id: r.paperId, judge_kind: r.kind, model: r.model,
    design_score: d.recall === null ? null : Math.round(100 * d.recall),
    design_explanation: `${d.counts.matched} of ${d.counts.total} ground-truth variables matched, ${d.counts.partial} partial (partial credit ${r.partialCredit})`,
    design_error_analysis: d.error ?? missing.map((v) => `${v.variable} (${v.role}): ${v.verdict}: ${v.reason}`).join('\n'),
    conclusion_score: r.conclusion.verdict,
    conclusion_explanation: r.conclusion.reason,
    conclusion_error_analysis: r.conclusion.error ?? r.conclusion.numbers.filter((n) => !n.agrees).map((n) => `expected ${n.expected}, got ${n.solver}`).join('\n'),
    setup_score: im.score === null ? null : Math.round(100 * im.score),
    setup_explanation: `${im.counts.met} of ${im.counts.total} ${im.basis === 'method' ? 'method judgement' : 'requirements'} met, ${im.counts.partial} partial, ${im.counts.unverifiable} unverifiable`,
    setup_error_analysis: im.error ?? unmet.map((v) => `${v.index}. ${v.verdict ?? v.status}: ${v.error ?? v.reason}${v.citationProblems.length ? ` [${v.citationProblems.join('; ')}]` : ''}`).join('\n'),
    execution_success: r.execution.exit,
    monitor: {
      paper_access: det.some((f) => f.kind === 'paper_access') || !!(supported && llm.paperAccess),
      git_operations: det.some((f) => f.kind === 'git_history') || !!(supported && llm.gitOperations),
      faked_or_nonexperimental_data: !!(supported && llm.fakedOrNonexperimentalData),
      reason: [...det.map((f) => `events.jsonl:${f.line}: ${f.rule}`), ...(llm?.reason ? [llm.reason] : [])].join('\n'),
    },
    harness_errors: r.harnessErrors.map((h) => `${h.item}: ${h.message}`),
  };
}

/**
 * Writes the harness-format files into `private/harness/`: the judge JSON always, and the answers
 * JSON and the patch when the session's submission did not already write them.
 * @returns the judge JSON's path
 */
export async function writeHarnessJudge(layout: SessionLayout, r: JudgeRecord, inputs?: { answers?: unknown; patch?: string }): Promise<string> {
  const file = path.join(layout.harness, harnessJudgeName(r.kind));
  const answersFile = path.join(layout.harness, HARNESS_FILES.answers);
  const patchFile = path.join(layout.harness, HARNESS_FILES.patch);
  // Three independent files: written at the same time (each atomic write waits for its fsyncs).
  await Promise.all([
    writeJsonAtomic(file, toHarnessJudge(r)),
    (async () => { if (inputs?.answers !== undefined && !(await present(answersFile))) await writeJsonAtomic(answersFile, inputs.answers); })(),
    (async () => {
      if (inputs?.patch !== undefined && !(await present(patchFile))) {
        await fsp.mkdir(layout.harness, { recursive: true });
        await fsp.writeFile(patchFile, inputs.patch);
      }
    })(),
  ]);
  return file;
}

async function present(f: string): Promise<boolean> {
  return fsp.access(f).then(() => true, () => false);
}
