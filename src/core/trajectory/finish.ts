import type { Phase } from '../steps/phases';
import { callTokens, STEPS_VERSION, type NewStep, type Step } from '../steps/step';
import { splitDiff } from './patchFiles';
import { Sanitizer } from './redact';
import type { Trajectory, TrajectoryBuilder } from './types';

const EDIT_TOOL = /(?:^|[_.\s-])(?:edit|write|create|str_replace|replace|insert|apply_patch|patch|file_editor|editor)(?:$|[_.\s-])|EditAction|FileEdit|StrReplace/i;
const EDIT_COMMAND = /(?:^(?:edit|create|insert|append|str_replace_editor)\b)|(?:^|[;&|]\s*)(?:cat\s+(?:<<[^>]*)?>|sed\s+-i|tee\s|echo\s.*>|printf\s.*>|patch\s|git\s+apply|cp\s|mv\s|mkdir\s|touch\s)/;
const RUN_COMMAND = /(?:^|[;&|(]\s*|\s)(?:python3?|bash|sh|pytest|make|npm|npx|node|torchrun|accelerate|deepspeed|java|go\s+run|cargo|\.\/[\w.-]+|conda\s+run|micromamba\s+run)\b/;
const FINISH_TOOL = /^(?:finish|submit|AgentFinishAction|FinishAction|task_complete|final_answer)$/i;

/**
 * The phase an agent's step suggests, or undefined when it says nothing new (the previous phase
 * holds). Rules (docs/steps.md, "Inferred phases"): a file edit → implementation; running a program
 * (`python`, `bash x.sh`, `pytest`, `make`, `./x`, …) → execution; `finish`/`submit` → conclusion.
 */
export function phaseHint(s: NewStep): Phase | undefined {
  // the harness's work and the run's task and result say nothing of the agent's phase
  if (s.stage || s.purpose) return undefined;
  if (s.edits?.length) return 'implementation';
  const tool = s.action?.tool ?? '';
  if (FINISH_TOOL.test(tool)) return 'conclusion';
  const cmd = s.action?.command;
  if (cmd !== undefined) {
    if (EDIT_COMMAND.test(cmd)) return 'implementation';
    if (RUN_COMMAND.test(cmd)) return 'execution';
    return undefined;
  }
  if (s.action && EDIT_TOOL.test(tool)) return 'implementation';
  return undefined;
}

/**
 * Completes a trajectory: numbers the steps, computes relative times (from the first timed step),
 * sets phases (exact ones kept; agents' inferred with {@link phaseHint}, starting in `design`, the
 * last agent message after the last action → `conclusion`), and sanitises everything it holds
 * (secrets redacted, lone surrogates replaced, each counted; a problem names what was found).
 */
export function finishTrajectory(b: TrajectoryBuilder): Trajectory {
  const g = finishing(b);
  for (;;) { const r = g.next(); if (r.done) return r.value; }
}

/** Steps finished between two yields of {@link finishing}. */
const STEPS_PER_TURN = 256;

/** {@link finishTrajectory} as a generator that yields (nothing) every {@link STEPS_PER_TURN} steps, for a caller that gives the event loop turns. */
export function* finishing(b: TrajectoryBuilder): Generator<void, Trajectory> {
  const san = new Sanitizer();
  const raw = b.steps;
  const firstMs = raw.find((s) => s.time)?.time?.ms;
  let phase: Phase = 'design';
  let lastAction = -1;
  raw.forEach((s, i) => { if ((s.action || s.edits?.length) && !s.stage && !s.purpose) lastAction = i; });
  const steps: Step[] = [];
  for (let i = 0; i < raw.length; i++) {
    const s = raw[i];
    if (b.exactPhases && s.phase) phase = s.phase;
    else if (!b.exactPhases) {
      const hint = s.actor === 'agent' || s.actor === 'tool' || s.actor === 'environment' ? phaseHint(s) : undefined;
      if (hint) phase = hint;
      else if (i > lastAction && s.actor === 'agent' && s.kind !== 'score' && !s.stage && !s.purpose && lastAction >= 0 && s.text) phase = 'conclusion';
    }
    const step = san.value(Object.assign(s, { index: i, phase, phaseInferred: !b.exactPhases }) as Step);
    if (step.time && firstMs !== undefined) step.time.relMs = step.time.ms - firstMs;
    steps.push(step);
    if (i % STEPS_PER_TURN === STEPS_PER_TURN - 1) yield;
  }
  const timed = steps.filter((s) => s.time).length;
  const problems = [...b.problems];
  if (steps.length > 0 && timed === 0) problems.push({ file: b.file, pointer: '', severity: 'info', message: 'the source has no timestamps: steps carry no time' });
  else if (timed > 0 && timed < steps.length) problems.push({ file: b.file, pointer: '', severity: 'info', message: `${steps.length - timed} of ${steps.length} steps have no timestamp in the source` });
  const model = b.model ?? mostUsedModel(steps);
  const t: Trajectory = {
    version: STEPS_VERSION, id: san.string(b.id), format: b.format, file: b.file,
    ...(b.task ? { task: san.string(b.task) } : {}),
    ...(b.sample ? { sample: san.value(b.sample) } : {}),
    ...(b.agent ? { agent: san.string(b.agent) } : {}),
    ...(model ? { model: san.string(model) } : {}),
    ...(b.taskText !== undefined ? { taskText: san.string(b.taskText) } : {}),
    ...(b.sourceUsage ? { sourceUsage: b.sourceUsage } : {}),
    ...(b.fileUsage ? { fileUsage: b.fileUsage } : {}),
    ...(b.spans?.length ? { spans: san.value(b.spans) } : {}),
    steps, sourceEvents: b.sourceEvents, mappedEvents: Math.min(b.mappedEvents, b.sourceEvents), skippedEvents: b.skippedEvents, timed, redactions: 0,
    ...(b.scores ? { scores: san.value(b.scores) } : {}),
    ...(b.metadata ? { metadata: san.value(b.metadata) } : {}),
    ...(b.patch !== undefined ? { patch: san.string(b.patch) } : {}),
    ...(b.answers ? { answers: san.value(b.answers) } : {}),
    problems: [],
  };
  // a trajectory of a known format that yields no step says why
  if (steps.length === 0 && !problems.some((p) => p.severity !== 'info' && /no step|empty|no events|holds no/i.test(p.message))) {
    const why = b.sourceEvents === 0 ? 'the source holds no events'
      : b.skippedEvents >= b.sourceEvents ? `all ${b.sourceEvents} of its events carry no row by design (span markers, state snapshots, token-stat updates)`
      : `none of its ${b.sourceEvents} events is of a kind the importer maps (see the problems above)`;
    problems.push({ file: b.file, pointer: '', severity: 'warning', message: `no steps: ${why}` });
  }
  const stepTotal = steps.reduce((n, x) => n + (callTokens(x.model) ?? 0), 0);
  const own = b.sourceUsage?.totalTokens;
  if (own !== undefined && steps.some((x) => callTokens(x.model) !== undefined) && stepTotal !== own) {
    problems.push({ file: b.file, pointer: '', severity: 'info', message: `the steps' model calls count ${stepTotal.toLocaleString('en')} tokens; the log's own total (${b.sourceUsage!.from}) is ${own.toLocaleString('en')}: the header shows the log's` });
  }
  if (san.loneSurrogates > 0) problems.push({ file: b.file, pointer: '', severity: 'warning', message: `${san.loneSurrogates} string(s) held lone UTF-16 surrogates (invalid Unicode), replaced by U+FFFD` });
  t.problems = san.value(problems);
  t.redactions = san.redactions;
  if (t.redactions > 0) t.problems.push({ file: b.file, pointer: '', severity: 'info', message: `${t.redactions} secret(s) redacted` });
  return t;
}

/** The model most model calls of `steps` name, or undefined. */
function mostUsedModel(steps: Step[]): string | undefined {
  const n = new Map<string, number>();
  for (const s of steps) if (s.model?.model) n.set(s.model.model, (n.get(s.model.model) ?? 0) + 1);
  let best: string | undefined; let most = 0;
  for (const [m, c] of n) if (c > most) { best = m; most = c; }
  return best;
}

/**
 * Adds the run's final patch (SWE-agent `info.submission`, OpenHands `test_result.git_patch`,
 * mini-swe-agent `info.submission`) as a step of its own: an edit of the agent, purpose
 * `submission`, one edit per file of the patch (its unified diff). An empty patch is a step that
 * says so. Counted as one source event, mapped.
 */
export function addSubmission(b: TrajectoryBuilder, patch: string, pointer: string, time?: NewStep['time']): void {
  const files = patch.trim() ? splitDiff(patch) : [];
  b.add({
    ...(time ? { time } : {}), kind: 'edit', actor: 'agent', purpose: 'submission',
    text: files.length ? `final submission: a patch of ${files.length} file${files.length === 1 ? '' : 's'} (${files.map((f) => f.path).slice(0, 6).join(', ')}${files.length > 6 ? ', …' : ''})` : 'final submission: an empty patch (no file changed)',
    ...(files.length ? { edits: files.map((f) => ({ path: f.path, diff: f.text, op: f.op })) } : {}),
    source: { file: b.file, pointer },
  });
  b.sourceEvents++;
  b.mappedEvents++;
}
