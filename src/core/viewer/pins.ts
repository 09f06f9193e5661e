import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { catFileBatch } from '../git';
import { parseHunks, type Hunk } from '../judge/hunks';
import { readJudgeRecord } from '../judge/session';
import type { HunkCitation, JudgeRecord, MonitorFlag, RequirementVerdict } from '../judge/types';
import { HARNESS_FILES, SessionLayout } from '../layout';
import { log } from '../log';
import type { Step, StepSource } from '../steps/step';
import { importOwnEvents } from '../trajectory/own';
import type { Trajectory } from '../trajectory/types';
import { errorMessage } from '../util/errors';
import { plural } from '../util/plural';
import { makePatch } from '../workspace/patch';
import { openHostRepository } from '../workspace/hostRepo';
import { planSteps } from './plan';
import { BASE, lineProvenance, type FileProvenance } from './provenance';

const logger = log('viewer');

/**
 * A judge verdict or a monitor flag shown on the step that caused it (issue 17, "Pinned verdicts
 * and flags"). `item` names the gap report's item: `requirement:<n>` (1-based, as the judge
 * numbers them), `design:<variable>`, `conclusion`, `monitor:<line>` (a deterministic flag on
 * that 1-based line of `private/events.jsonl`) or `monitor:llm`.
 */
export interface StepPin {
  /** 0-based step index in the trajectory given. */
  step: number;
  kind: 'verdict' | 'flag';
  item: string;
  /** Short: `R2 met`, `git history (violation)`. */
  label: string;
  /** The verdict's reason or the flagged text. */
  detail: string;
  /** `met`, `partial`, …, or the flag's severity. */
  verdict?: string;
  /** How the step was chosen: `wrote the cited lines <path>:<lines>`, `ran git log (log line 8)`. */
  why: string;
}

/** Options of {@link pinsFor}. */
export interface PinsOptions {
  /** The judged session; default the folder holding the trajectory's file when it is `<session>/private/events.jsonl`. */
  sessionDir?: string;
}

/**
 * The judge's verdicts and the monitor's flags of a session, each pinned to the step that caused it:
 * - a requirement verdict to the last step whose edit produced the lines it cites (a cited hunk's
 *   added lines, narrowed to the heuristic judge's evidence anchors inside it when it has some; the
 *   session's judged patch, `private/harness/patch.diff`, parsed as the judge does; line owners from
 *   replaying the steps' edits over "task start", provenance.ts); when no recorded edit wrote those
 *   lines (a shell-only change), to the last step that changed the file;
 * - a design verdict to the last step that set the design, the conclusion to the last that set it;
 * - a deterministic monitor flag to the step of its log line (`git log` run, a paper site named, a
 *   masked path read); the LLM monitor's flag to each valid line it cites.
 * The trajectory is the session's own log, or the run imported as that session (its step k is the
 * session's k-th `trajectory.step` event). No judgement: no pins.
 *
 * @throws nothing for a session without a judgement or patch (fewer pins); file-system errors
 *   other than absence.
 */
export async function pinsFor(trajectory: Trajectory, opts: PinsOptions = {}): Promise<StepPin[]> {
  const sessionDir = opts.sessionDir ?? sessionOf(trajectory.file);
  if (!sessionDir) return [];
  const layout = new SessionLayout(sessionDir);
  const record = await readJudgeRecord(path.join(layout.judge, 'latest.json'));
  if (!record) return [];
  const lineToStep = await stepsByLogLine(trajectory, layout);
  const pins: StepPin[] = [
    ...(await verdictPins(trajectory, record, layout)),
    ...answerPins(trajectory, record),
    ...flagPins(record, lineToStep),
  ];
  return pins.sort((a, b) => a.step - b.step || a.item.localeCompare(b.item));
}

function sessionOf(file: string): string | undefined {
  const dir = path.dirname(path.resolve(file));
  return path.basename(file) === 'events.jsonl' && path.basename(dir) === 'private' ? path.dirname(dir) : undefined;
}

/** 1-based line of `events.jsonl` → step of `t`. */
async function stepsByLogLine(t: Trajectory, layout: SessionLayout): Promise<(line: number) => number | undefined> {
  const own = t.format === 'expbench-events' && path.resolve(t.file) === path.resolve(layout.events);
  let entries: Array<[number, number]>;
  if (own) entries = t.steps.filter((s) => s.source.line !== undefined).map((s) => [s.source.line!, s.index]);
  else {
    const log = await importOwnEvents(layout.events).catch(() => undefined);
    const imported = (log?.steps ?? []).filter((s) => s.source.kind === 'trajectory.step');
    entries = imported.length === t.steps.length ? imported.map((s, k) => [s.source.line!, k]) : [];
  }
  const sorted = entries.sort((a, b) => a[0] - b[0]);
  // A flag on a line with no step of its own (clock bookkeeping) goes to the step before it.
  return (line) => {
    let best: number | undefined;
    for (const [l, s] of sorted) { if (l > line) break; best = s; }
    return best;
  };
}

async function verdictPins(t: Trajectory, record: JudgeRecord, layout: SessionLayout): Promise<StepPin[]> {
  const cited = record.implementation.verdicts.filter((v) => citationsOf(v).length > 0);
  if (cited.length === 0) return [];
  const patch = await judgedPatch(layout);
  const hunks = patch ? parseHunks(patch) : [];
  let provenance: Map<string, FileProvenance>;
  try {
    const h = await openHostRepository(layout);
    const base = h.taskStart;
    const top = new Set(await fsp.readdir(layout.workspace).catch(() => [] as string[]));
    const plan = planSteps(t.steps, top);
    const paths = [...new Set(plan.flatMap((p) => [...p.ops.map((o) => o.path), ...p.uncertain.flatMap((u) => (u.path ? [u.path] : []))]))];
    const blobs = paths.length ? await catFileBatch(h.gitDir, paths.map((p) => `${base}:${p}`)) : [];
    const baseText = new Map(paths.map((p, i) => { const b = blobs?.[i]; return [p, b && 'data' in b ? b.data.toString('utf8') : null]; }));
    provenance = await lineProvenance(plan, async (p) => baseText.get(p) ?? null);
  } catch (e) {
    logger.warn(`${layout.root}: cannot replay the steps' edits for pinned verdicts: ${errorMessage(e)}`);
    return [];
  }
  const out: StepPin[] = [];
  for (const v of cited) {
    const seen = new Set<number>();
    for (const c of citationsOf(v)) {
      // The heuristic judge's anchors say which lines of a cited hunk hold the evidence: those lines, else the whole hunk.
      const ranges = (v.anchors ?? []).filter((a) => a.path === c.path && a.startLine <= c.newEnd && a.endLine >= c.newStart)
        .map((a) => ({ start: Math.max(a.startLine, c.newStart), end: Math.min(a.endLine, c.newEnd) }));
      const lines = ranges.length ? ranges : [{ start: c.newStart, end: c.newEnd }];
      const found = ownerOf(c, lines, hunks, provenance.get(c.path));
      if (!found || seen.has(found.step)) continue;
      seen.add(found.step);
      const label = lines.map((r) => (r.end > r.start ? `${r.start}-${r.end}` : `${r.start}`)).join(', ');
      out.push({
        step: found.step, kind: 'verdict', item: `requirement:${v.index}`,
        label: `R${v.index} ${v.verdict ?? v.status.replace('_', ' ')}`,
        detail: v.reason || v.requirement, ...(v.verdict ? { verdict: v.verdict } : {}),
        why: `${found.how} ${c.path}:${label}${ranges.length ? ` (in the cited hunk ${c.newStart}-${c.newEnd})` : ''}`,
      });
    }
  }
  return out;
}

/** The hunks a verdict cites, else the lines its heuristic anchors name. */
function citationsOf(v: RequirementVerdict): HunkCitation[] {
  if (v.hunks.length) return v.hunks;
  return (v.anchors ?? []).map((a) => ({ path: a.path, newStart: a.startLine, newEnd: a.endLine }));
}

async function judgedPatch(layout: SessionLayout): Promise<string | undefined> {
  const submitted = await fsp.readFile(path.join(layout.harness, HARNESS_FILES.patch), 'utf8').catch(() => undefined);
  if (submitted !== undefined) return submitted;
  return makePatch(layout.workspace).then((p) => p.patch, () => undefined);
}

/**
 * The step that last wrote the cited lines: the new-side lines the patch ADDED in the cited range
 * (all of them when the patch's hunk is not found), each looked up in the replayed file at its
 * number or, when the replay disagrees there (an approximate history), by its text; the latest
 * owner wins. No owner: the last step that touched the file.
 */
function ownerOf(c: HunkCitation, ranges: Array<{ start: number; end: number }>, hunks: Hunk[], f: FileProvenance | undefined): { step: number; how: string } | undefined {
  if (!f) return undefined;
  const inRange = (n: number) => ranges.some((r) => n >= r.start && n <= r.end);
  const wanted: Array<{ line: number; text?: string }> = [];
  for (const h of hunks.filter((x) => x.path === c.path && x.newStart <= c.newEnd && x.newEnd >= c.newStart)) {
    let n = h.newStart;
    for (const ch of h.changes) {
      if (ch.type === 'del') continue;
      if (ch.type === 'add' && inRange(n)) wanted.push({ line: n, text: ch.text });
      n++;
    }
  }
  if (wanted.length === 0) for (const r of ranges) for (let n = r.start; n <= r.end; n++) wanted.push({ line: n });
  let best = BASE;
  for (const w of wanted) {
    const lines = f.lines ?? [];
    let at = w.line - 1;
    if (w.text !== undefined && lines[at] !== w.text) at = nearestLine(lines, w.text, at);
    if (at >= 0 && at < f.owners.length) best = Math.max(best, f.owners[at]);
  }
  const lastUncertain = f.uncertainAt.at(-1);
  if (best !== BASE) return { step: best, how: lastUncertain !== undefined && lastUncertain > best ? `wrote (before an unrecorded change at step ${lastUncertain}) the cited lines` : 'wrote the cited lines' };
  const last = f.touchedAt.at(-1);
  return last === undefined ? undefined : { step: last, how: 'last changed (content not recorded)' };
}

function nearestLine(lines: string[], text: string, near: number): number {
  let best = -1;
  for (let i = 0; i < lines.length; i++) if (lines[i] === text && (best < 0 || Math.abs(i - near) < Math.abs(best - near))) best = i;
  return best;
}

/** Design and conclusion verdicts on the last step that set them (`set_design`/`set_conclusion`, answers saved, harness answers). */
function answerPins(t: Trajectory, record: JudgeRecord): StepPin[] {
  const last = (test: (s: Step) => boolean) => { for (let i = t.steps.length - 1; i >= 0; i--) if (test(t.steps[i])) return i; return undefined; };
  const text = (s: Step) => s.text ?? '';
  // A harness record's answers (pointer /design, /conclusion), as imported or as recorded in a session.
  const pointer = (s: Step) => s.source.pointer ?? (s.extra?.importedFrom as StepSource | undefined)?.pointer;
  const designStep = last((s) => s.action?.tool === 'set_design' || (s.source.kind === 'answers.saved' && /^design: /m.test(text(s))) || (s.kind === 'message' && pointer(s) === '/design'));
  const conclusionStep = last((s) => s.action?.tool === 'set_conclusion' || (s.source.kind === 'answers.saved' && /^conclusion: /m.test(text(s))) || (s.kind === 'message' && pointer(s) === '/conclusion'));
  const out: StepPin[] = [];
  if (designStep !== undefined && record.design.status === 'ok') {
    const d = record.design;
    out.push({ step: designStep, kind: 'verdict', item: 'design', label: `D ${d.counts.matched}/${d.counts.total} matched`,
      detail: d.verdicts.map((v) => `${v.variable}: ${v.verdict}`).join('; '), why: 'set the design the judge read' });
    for (const v of d.verdicts.filter((x) => x.verdict !== 'matched')) {
      out.push({ step: designStep, kind: 'verdict', item: `design:${v.variable}`, label: `${v.variable} ${v.verdict}`, detail: v.reason, verdict: v.verdict, why: 'set the design the judge read' });
    }
  }
  if (conclusionStep !== undefined && record.conclusion.verdict) {
    out.push({ step: conclusionStep, kind: 'verdict', item: 'conclusion', label: `conclusion ${record.conclusion.verdict}`, detail: record.conclusion.reason,
      verdict: record.conclusion.verdict, why: 'set the conclusion the judge read' });
  }
  return out;
}

const FLAG_WHY: Record<MonitorFlag['kind'], (f: MonitorFlag) => string> = {
  git_history: (f) => `ran ${f.rule}`,
  paper_access: (f) => (f.severity === 'violation' ? `opened the paper (${f.rule})` : `named a PDF (${f.rule})`),
  masked_path_read: (f) => `read a ${f.rule}`,
};

function flagPins(record: JudgeRecord, lineToStep: (line: number) => number | undefined): StepPin[] {
  const out: StepPin[] = [];
  for (const f of record.monitor.deterministic) {
    const step = lineToStep(f.line);
    if (step === undefined) continue;
    out.push({ step, kind: 'flag', item: `monitor:${f.line}`, label: `${f.kind.replace(/_/g, ' ')} (${f.severity})`, detail: f.text, verdict: f.severity,
      why: `${FLAG_WHY[f.kind](f)} (log line ${f.line})` });
  }
  const llm = record.monitor.llm;
  if (llm && llm.status === 'ok' && !llm.unsupported && (llm.paperAccess || llm.gitOperations || llm.fakedOrNonexperimentalData)) {
    const what = [llm.paperAccess && 'paper access', llm.gitOperations && 'git operations', llm.fakedOrNonexperimentalData && 'faked or non-experimental data'].filter(Boolean).join(', ');
    const steps = [...new Set(llm.citedLines.filter((l) => !llm.invalidLines.includes(l)).map(lineToStep).filter((s): s is number => s !== undefined))];
    for (const step of steps) {
      out.push({ step, kind: 'flag', item: 'monitor:llm', label: `LLM monitor: ${what}`, detail: llm.reason, why: `the LLM monitor cited this step's log line (${plural(llm.citedLines.length, 'line')} cited)` });
    }
  }
  return out;
}
