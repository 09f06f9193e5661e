import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { isHarnessJudge, outcomeFromHarnessJudge } from '../interop/harnessIn';
import { harnessGroup, readHarnessJudgeName } from '../interop/harnessLayout';
import { JudgeRecord } from '../judge/types';
import { agreementFigures, type AgreementFigures, type LabelPair } from '../metrics/agreement';
import { compareJudgements, runKeyForFile, runKeyForSession, type Judgement } from '../review';
import { errorMessage } from '../util/errors';
import { plural } from '../util/plural';

/**
 * How far each judge agrees with people (docs/curation.md "Judge agreement"). People's labels are
 * `verdict-flip` judgements of the review store on item subjects with a run (`{verdict}`; each
 * labeller's latest counts). The judge's verdicts come from session folders
 * (`private/judge/latest.json`: per item) and reference-harness judge files (task scores only:
 * agreement at task level). Per judge (model + prompt version, or the heuristic), per phase and
 * per labeller: accuracy, Cohen's κ and macro-F1 with bootstrap intervals over runs
 * (src/core/metrics/agreement.ts); where two labellers labelled the same items, their own
 * figures beside (the ceiling).
 */

/** Phases and the labels each takes. Task level (harness files): `full` (score 100), `partial`, `none` (0); the conclusion as is. */
export const PHASE_LABELS = {
  design: ['matched', 'partial', 'missing'],
  implementation: ['met', 'partial', 'unmet', 'unverifiable'],
  conclusion: ['correct', 'incorrect'],
  'task:design': ['full', 'partial', 'none'],
  'task:implementation': ['full', 'partial', 'none'],
  'task:conclusion': ['correct', 'incorrect'],
} as const;
export type Phase = keyof typeof PHASE_LABELS;

/** One judged item: the run (a cluster), the item id of the review store and the judge's label. */
export interface JudgedItem {
  run: string;
  task: string;
  item: string;
  phase: Phase;
  label: string;
  /** `heuristic (expbench-judge-1)`, `<model> (expbench-judge-1)`, `harness file: <group>`. */
  judge: string;
  source: string;
}

export interface AgreementRow {
  judge: string;
  phase: Phase;
  labeller: string;
  figures: AgreementFigures;
}

export interface CuratorRow {
  phase: Phase;
  labellers: [string, string];
  figures: AgreementFigures;
}

export interface AgreementReport {
  rows: AgreementRow[];
  /** Two labellers against each other, per phase, over the items both labelled (the ceiling). */
  curators: CuratorRow[];
  labellers: string[];
  /** Judged items read, labelled items read, and labels that matched no judged item (or not the phase's labels). */
  judgedItems: number;
  labels: number;
  unmatchedLabels: number;
  notes: string[];
  skipped: { file: string; reason: string }[];
}

/** The item id of a phase's verdict: `design:<variable>`, `requirement:<n>`, `conclusion`; task level `task:<phase>`. */
export function phaseOfItem(item: string): Phase | undefined {
  if (item.startsWith('design:')) return 'design';
  if (/^requirement:\d+$/.test(item)) return 'implementation';
  if (item === 'conclusion') return 'conclusion';
  if (item === 'task:design' || item === 'task:implementation' || item === 'task:conclusion') return item;
  return undefined;
}

/** The judge's name of a record: `heuristic (<prompt version>)` or `<model> (<prompt version>)`. */
export function judgeName(r: Pick<JudgeRecord, 'kind' | 'model' | 'promptVersion'>): string {
  return `${r.kind === 'heuristic' ? 'heuristic' : r.model ?? 'llm'} (${r.promptVersion})`;
}

/** The items a judge record decided (status ok, a verdict given), keyed by `run`. */
export function itemsOfRecord(r: JudgeRecord, run: string, source: string): JudgedItem[] {
  const judge = judgeName(r);
  const base = { run, task: r.taskId, judge, source };
  const out: JudgedItem[] = [];
  if (r.design.status === 'ok') for (const v of r.design.verdicts) out.push({ ...base, item: `design:${v.variable}`, phase: 'design', label: v.verdict });
  for (const v of r.implementation.verdicts) if (v.status === 'ok' && v.verdict) out.push({ ...base, item: `requirement:${v.index}`, phase: 'implementation', label: v.verdict });
  if (r.conclusion.status === 'ok' && r.conclusion.verdict) out.push({ ...base, item: 'conclusion', phase: 'conclusion', label: r.conclusion.verdict });
  return out;
}

/**
 * Reads the judged items under `inputs`: session folders (their judge record; `workspace/` and
 * the rest of `private/` are never searched), and `*.json` reference-harness judge files (task
 * level; run key `file:<sha256 of the file>#<task id>`). Folders are searched to depth 8.
 */
export async function collectJudgedItems(inputs: readonly string[]): Promise<{ items: JudgedItem[]; skipped: { file: string; reason: string }[] }> {
  const items: JudgedItem[] = [];
  const skipped: { file: string; reason: string }[] = [];
  const walk = async (p: string, depth: number): Promise<void> => {
    const st = await fsp.stat(p).catch(() => undefined);
    if (!st) { skipped.push({ file: p, reason: 'does not exist' }); return; }
    if (st.isFile()) { if (p.endsWith('.json')) await readHarnessFile(p, items, skipped); return; }
    const latest = path.join(p, 'private', 'judge', 'latest.json');
    if (await fsp.access(latest).then(() => true, () => false)) {
      try {
        const r = JudgeRecord.parse(JSON.parse(await fsp.readFile(latest, 'utf8')));
        items.push(...itemsOfRecord(r, await runKeyForSession(p), latest));
      } catch (e) {
        skipped.push({ file: latest, reason: errorMessage(e).slice(0, 300) });
      }
      return;
    }
    if (depth >= 8) return;
    const entries = await fsp.readdir(p, { withFileTypes: true }).catch(() => []);
    const isSession = entries.some((e) => e.name === 'private' && e.isDirectory()) && entries.some((e) => e.name === 'workspace' && e.isDirectory());
    if (isSession) { skipped.push({ file: p, reason: 'a session not judged yet (no private/judge/latest.json)' }); return; }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name === 'node_modules' || e.name === '.git' || e.name.startsWith('.')) continue;
      await walk(path.join(p, e.name), depth + 1);
    }
  };
  for (const i of inputs) await walk(path.resolve(i), 0);
  return { items, skipped };
}

async function readHarnessFile(file: string, items: JudgedItem[], skipped: { file: string; reason: string }[]): Promise<void> {
  let buf: Buffer;
  let json: unknown;
  try {
    buf = await fsp.readFile(file);
    json = JSON.parse(buf.toString('utf8'));
  } catch (e) {
    skipped.push({ file, reason: `not JSON: ${errorMessage(e).slice(0, 200)}` });
    return;
  }
  if (!isHarnessJudge(json)) return;
  const named = await readHarnessJudgeName(file);
  const group = (named && harnessGroup(named)) ?? path.basename(path.dirname(file));
  const o = outcomeFromHarnessJudge(json, file, group, named);
  const run = runKeyForFile(createHash('sha256').update(buf).digest('hex'), o.taskId);
  const base = { run, task: o.taskId, judge: `harness file${o.kind === 'heuristic' ? ' (heuristic)' : ''}: ${group}`, source: file };
  const level = (s: number) => (s >= 1 ? 'full' : s <= 0 ? 'none' : 'partial');
  if (o.design.status === 'ok' && o.design.score !== undefined) items.push({ ...base, item: 'task:design', phase: 'task:design', label: level(o.design.score) });
  if (o.implementation.status === 'ok' && o.implementation.score !== undefined) items.push({ ...base, item: 'task:implementation', phase: 'task:implementation', label: level(o.implementation.score) });
  if (o.conclusion.status === 'ok' && o.conclusion.correct !== null) items.push({ ...base, item: 'task:conclusion', phase: 'task:conclusion', label: o.conclusion.correct ? 'correct' : 'incorrect' });
}

/** One label: each labeller's latest `verdict-flip` of an item in a run. */
interface Label { run: string; item: string; labeller: string; label: string; phase: Phase }

function labelsOf(judgements: readonly Judgement[], notes: string[]): Label[] {
  const latest = new Map<string, Judgement>();
  for (const j of [...judgements].sort(compareJudgements)) {
    if (j.kind !== 'verdict-flip' || j.subject.kind !== 'item' || j.subject.run === undefined) continue;
    latest.set(JSON.stringify([j.subject.run, j.subject.item, j.by]), j);
  }
  const out: Label[] = [];
  for (const j of latest.values()) {
    const s = j.subject as { run: string; item: string };
    const phase = phaseOfItem(s.item);
    const label = (j.value as { verdict: string }).verdict;
    if (!phase) { notes.push(`label ${j.id} by ${j.by}: item ${s.item} is not a judge item`); continue; }
    if (!(PHASE_LABELS[phase] as readonly string[]).includes(label)) { notes.push(`label ${j.id} by ${j.by}: "${label}" is not a ${phase} label (${PHASE_LABELS[phase].join(', ')})`); continue; }
    out.push({ run: s.run, item: s.item, labeller: j.by, label, phase });
  }
  return out;
}

/** Groups pairs by run (the bootstrap's cluster). */
function byRun(pairs: { run: string; pair: LabelPair }[]): LabelPair[][] {
  const m = new Map<string, LabelPair[]>();
  for (const p of pairs) m.set(p.run, [...(m.get(p.run) ?? []), p.pair]);
  return [...m.keys()].sort().map((k) => m.get(k)!);
}

/**
 * The agreement report over `items` (judged) and the review store's `judgements` (labels).
 * Rows are sorted by judge, phase (in {@link PHASE_LABELS} order) and labeller.
 */
export function agreementReport(items: readonly JudgedItem[], judgements: readonly Judgement[], opts: { resamples?: number; seed?: number } = {}): Omit<AgreementReport, 'skipped'> {
  const notes: string[] = [];
  const labels = labelsOf(judgements, notes);
  const judgedKey = new Map<string, JudgedItem[]>();
  for (const it of items) judgedKey.set(`${it.run}\0${it.item}`, [...(judgedKey.get(`${it.run}\0${it.item}`) ?? []), it]);
  const groups = new Map<string, { judge: string; phase: Phase; labeller: string; pairs: { run: string; pair: LabelPair }[] }>();
  let unmatched = 0;
  for (const l of labels) {
    const judged = judgedKey.get(`${l.run}\0${l.item}`);
    if (!judged) { unmatched++; continue; }
    for (const j of judged) {
      const key = JSON.stringify([j.judge, l.phase, l.labeller]);
      const g = groups.get(key) ?? { judge: j.judge, phase: l.phase, labeller: l.labeller, pairs: [] };
      g.pairs.push({ run: l.run, pair: { reference: l.label, other: j.label } });
      groups.set(key, g);
    }
  }
  const order = Object.keys(PHASE_LABELS);
  const rows = [...groups.values()]
    .sort((a, b) => a.judge.localeCompare(b.judge) || order.indexOf(a.phase) - order.indexOf(b.phase) || a.labeller.localeCompare(b.labeller))
    .map((g) => ({ judge: g.judge, phase: g.phase, labeller: g.labeller, figures: agreementFigures(byRun(g.pairs), opts) }));
  const labellers = [...new Set(labels.map((l) => l.labeller))].sort();
  const curators: CuratorRow[] = [];
  for (let i = 0; i < labellers.length; i++) {
    for (let k = i + 1; k < labellers.length; k++) {
      const [a, b] = [labellers[i], labellers[k]];
      for (const phase of order as Phase[]) {
        const mine = new Map(labels.filter((l) => l.labeller === a && l.phase === phase).map((l) => [`${l.run}\0${l.item}`, l]));
        const pairs = labels.filter((l) => l.labeller === b && l.phase === phase && mine.has(`${l.run}\0${l.item}`))
          .map((l) => ({ run: l.run, pair: { reference: mine.get(`${l.run}\0${l.item}`)!.label, other: l.label } }));
        if (pairs.length > 0) curators.push({ phase, labellers: [a, b], figures: agreementFigures(byRun(pairs), opts) });
      }
    }
  }
  if (unmatched > 0) notes.push(`${unmatched} labels name an item no judge decided in the runs read (a conclusion the heuristic does not judge, or a run not given)`);
  return { rows, curators, labellers, judgedItems: items.length, labels: labels.length, unmatchedLabels: unmatched, notes };
}

/** {@link collectJudgedItems} then {@link agreementReport}. @throws ExpBenchError `BAD_INPUT` when no input is given */
export async function judgeAgreement(inputs: readonly string[], judgements: readonly Judgement[], opts: { resamples?: number; seed?: number } = {}): Promise<AgreementReport> {
  if (inputs.length === 0) throw new ExpBenchError('BAD_INPUT', 'agreement', 'give at least one folder of judged sessions or harness judge files');
  const { items, skipped } = await collectJudgedItems(inputs);
  return { ...agreementReport(items, judgements, opts), skipped };
}

/** `0.83 [0.71, 0.92]`, `—` for an undefined value. */
export function formatEstimate(e: { value: number | null; interval: [number, number] | null }): string {
  if (e.value === null) return '—';
  return `${e.value.toFixed(2)}${e.interval ? ` [${e.interval[0].toFixed(2)}, ${e.interval[1].toFixed(2)}]` : ''}`;
}

/** The report as a Markdown table (one row per judge, phase and labeller; then the labellers' own rows). */
export function agreementMarkdown(r: Omit<AgreementReport, 'skipped'>): string {
  const lines = [
    '| judge | phase | labeller | items | runs | accuracy | Cohen\'s κ | macro-F1 |', '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...r.rows.map((x) => `| ${x.judge} | ${x.phase} | ${x.labeller} | ${x.figures.items} | ${x.figures.clusters} | ${formatEstimate(x.figures.accuracy)} | ${formatEstimate(x.figures.kappa)} | ${formatEstimate(x.figures.macroF1)} |`),
    ...r.curators.map((x) => `| ${x.labellers[0]} vs ${x.labellers[1]} (ceiling) | ${x.phase} | — | ${x.figures.items} | ${x.figures.clusters} | ${formatEstimate(x.figures.accuracy)} | ${formatEstimate(x.figures.kappa)} | ${formatEstimate(x.figures.macroF1)} |`),
  ];
  const notes = [...new Set([...r.rows.flatMap((x) => x.figures.notes.map((n) => `${x.judge}, ${x.phase}: ${n}`)), ...r.notes])];
  return [...lines, '', `${plural(r.labels, 'label')} by ${plural(r.labellers.length, 'labeller')} (${r.labellers.join(', ') || 'none'}); ${r.judgedItems} judged items read; intervals: 95% percentile bootstrap over runs.`, ...notes.map((n) => `- ${n}`)].join('\n');
}
