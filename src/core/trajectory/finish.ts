import type { Phase } from '../steps/phases';
import { STEPS_VERSION, type NewStep, type Step } from '../steps/step';
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
  const san = new Sanitizer();
  const raw = b.steps;
  const firstMs = raw.find((s) => s.time)?.time?.ms;
  let phase: Phase = 'design';
  let lastAction = -1;
  raw.forEach((s, i) => { if (s.action || s.edits?.length) lastAction = i; });
  const steps: Step[] = raw.map((s, i) => {
    if (b.exactPhases && s.phase) phase = s.phase;
    else if (!b.exactPhases) {
      const hint = s.actor === 'agent' || s.actor === 'tool' || s.actor === 'environment' ? phaseHint(s) : undefined;
      if (hint) phase = hint;
      else if (i > lastAction && s.actor === 'agent' && s.kind !== 'score' && lastAction >= 0 && s.text) phase = 'conclusion';
    }
    const step = san.value(Object.assign(s, { index: i, phase, phaseInferred: !b.exactPhases }) as Step);
    if (step.time && firstMs !== undefined) step.time.relMs = step.time.ms - firstMs;
    return step;
  });
  const timed = steps.filter((s) => s.time).length;
  const problems = [...b.problems];
  if (steps.length > 0 && timed === 0) problems.push({ file: b.file, pointer: '', severity: 'info', message: 'the source has no timestamps: steps carry no time' });
  else if (timed > 0 && timed < steps.length) problems.push({ file: b.file, pointer: '', severity: 'info', message: `${steps.length - timed} of ${steps.length} steps have no timestamp in the source` });
  const t: Trajectory = {
    version: STEPS_VERSION, id: san.string(b.id), format: b.format, file: b.file,
    ...(b.task ? { task: san.string(b.task) } : {}),
    steps, sourceEvents: b.sourceEvents, mappedEvents: Math.min(b.mappedEvents, b.sourceEvents), skippedEvents: b.skippedEvents, timed, redactions: 0,
    ...(b.scores ? { scores: san.value(b.scores) } : {}),
    ...(b.metadata ? { metadata: san.value(b.metadata) } : {}),
    ...(b.patch !== undefined ? { patch: san.string(b.patch) } : {}),
    ...(b.answers ? { answers: san.value(b.answers) } : {}),
    problems: [],
  };
  if (san.loneSurrogates > 0) problems.push({ file: b.file, pointer: '', severity: 'warning', message: `${san.loneSurrogates} string(s) held lone UTF-16 surrogates (invalid Unicode), replaced by U+FFFD` });
  t.problems = san.value(problems);
  t.redactions = san.redactions;
  if (t.redactions > 0) t.problems.push({ file: b.file, pointer: '', severity: 'info', message: `${t.redactions} secret(s) redacted` });
  return t;
}
