import type { JudgeRecord, RequirementVerdict } from '../../core/judge/types';
import type { Task } from '../../core/tasks/types';
import type { GapsLink, GapsView } from '../../protocol/messages';

/**
 * The VS Code-free part of the gaps feature: the text of a task's read-only "Requirements"
 * document and the gap report payload, both computed from a task and its judge record.
 */

/** The read-only "Requirements" document of a task: its text and the 0-based line of each item (by 1-based index). */
export interface RequirementsDoc {
  text: string;
  lines: Map<number, number>;
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * Lines: a title, a note, then one line per requirement (`Requirement N: text`); for type-3 tasks
 * (or tasks without requirements) one line `Requirement 1 (method): text`, matching the judge's
 * indices (src/core/judge/heuristic.ts and llm.ts judge type 3 against `method` as item 1).
 */
export function requirementsDocument(task: Task): RequirementsDoc {
  const byMethod = task.type === 3 || task.requirements.length === 0;
  return docOf(`${task.id} (type ${task.type})`, byMethod, byMethod ? (task.method.trim() ? [task.method] : []) : task.requirements.map((r) => r.text));
}

/** The same document made from a judge record's items, for a session whose task cannot be loaded. */
export function requirementsFromRecord(r: JudgeRecord): RequirementsDoc {
  const items: string[] = [];
  for (const v of r.implementation.verdicts) items[v.index - 1] = v.requirement;
  return docOf(`${r.taskId} (type ${r.taskType})`, r.implementation.basis === 'method', Array.from(items, (t) => t ?? ''));
}

function docOf(title: string, byMethod: boolean, items: string[]): RequirementsDoc {
  const out = [`Requirements of ${title}`, 'Read-only: the implementation requirements the judge checks (ground truth).', ''];
  const lines = new Map<number, number>();
  items.forEach((text, i) => {
    lines.set(i + 1, out.length);
    out.push(`Requirement ${i + 1}${byMethod ? ' (method)' : ''}: ${oneLine(text)}`);
  });
  if (items.length === 0) out.push('(this task has no requirements and no method)');
  return { text: out.join('\n') + '\n', lines };
}

/** Display name of whoever produced the record: `heuristic`, or the model. */
export function judgedBy(r: JudgeRecord): string {
  return r.kind === 'heuristic' ? 'heuristic' : r.model ?? 'LLM judge';
}

/** Verdicts that are gaps (diagnostics are made for these). */
export function isGap(v: RequirementVerdict): boolean {
  return v.verdict === 'unmet' || v.verdict === 'partial' || v.verdict === 'unverifiable';
}

/** `path:start-end` of a cited range (1-based, inclusive). */
export function rangeLabel(path: string, start: number, end: number): string {
  return end > start ? `${path}:${start}-${end}` : `${path}:${start}`;
}

const pct = (x: number | null) => (x === null ? '—' : `${Math.round(x * 100)}%`);
const toneOf = (v: string | null): 'ok' | 'warn' | 'bad' | 'muted' =>
  v === 'met' || v === 'matched' || v === 'correct' ? 'ok' : v === 'partial' || v === 'unverifiable' ? 'warn' : v === 'unmet' || v === 'missing' || v === 'incorrect' ? 'bad' : 'muted';

/** The links of one requirement in the gap report: its hunks, the ground-truth diff, its line in the Requirements document. */
function requirementLinks(v: RequirementVerdict): GapsLink[] {
  const links: GapsLink[] = v.hunks.map((h) => ({ label: rangeLabel(h.path, h.newStart, h.newEnd), call: { action: 'revealHunk', payload: { path: h.path, newStart: h.newStart, newEnd: h.newEnd } } }));
  if (v.groundTruth.length) links.push({ label: 'ground truth ↔ your code', call: { action: 'openDiff', payload: { index: v.index } } });
  links.push({ label: 'requirement', call: { action: 'showRequirement', payload: { index: v.index } } });
  return links;
}

/**
 * The gap report of the brief webview (section `gaps`): per phase (design, implementation,
 * execution, conclusion, monitor) and per item, the verdict, the reason and links. `stale` says
 * that the workspace's patch is no longer the judged one.
 */
export function gapsView(r: JudgeRecord, stale: boolean): GapsView {
  const by = judgedBy(r);
  const d = r.design;
  const im = r.implementation;
  const c = im.counts;
  const e = r.execution;
  const phases: GapsView['phases'] = [
    {
      id: 'design', title: 'Design',
      score: d.status === 'ok' ? `D ${pct(d.recall)} (${d.counts.matched} matched, ${d.counts.partial} partial, ${d.counts.missing} missing; precision ${pct(d.precision)})` : d.status,
      items: d.verdicts.map((v) => ({
        label: `${v.role}: ${v.variable}`, verdict: v.verdict, tone: toneOf(v.verdict),
        reason: `${v.reason}${v.quote ? ` — “${v.quote}”` : ''}`, links: [],
      })),
    },
    {
      id: 'implementation', title: im.basis === 'method' ? 'Implementation (judged against the method: type 3)' : 'Implementation',
      score: im.status === 'ok' || im.score !== null
        ? `I ${pct(im.score)} (${c.met} met, ${c.partial} partial, ${c.unmet} unmet, ${c.unverifiable} unverifiable of ${c.total})`
        : `${im.status}${c.harnessError ? ` (${c.harnessError} harness errors)` : ''}`,
      items: im.verdicts.map((v) => ({
        label: `Requirement ${v.index}: ${oneLine(v.requirement)}`,
        verdict: v.status === 'harness_error' ? 'harness error' : v.verdict ?? v.status,
        tone: v.status === 'harness_error' ? 'bad' : toneOf(v.verdict),
        reason: [v.reason || v.error || '', ...v.citationProblems.map((p) => `citation rejected: ${p}`)].filter(Boolean).join(' · '),
        links: requirementLinks(v),
      })),
    },
    {
      id: 'execution', title: 'Execution',
      score: !e.available ? 'E not run' : `E ${e.exit ? 'pass' : 'fail'}${e.mode ? ` (${e.mode})` : ''}`,
      items: !e.available
        ? [{ label: 'Verifier', verdict: 'not run', tone: 'muted', reason: 'no verification record: judged without E (run "EXP-Bench: Run Judge and Verifier" with Docker available)', links: [] }]
        : [
            { label: 'reproduce_exp_bench.sh', verdict: e.exit ? 'pass' : 'fail', tone: e.exit ? 'ok' : 'bad', reason: `exit code ${e.exitCode ?? '—'}${e.clean === false ? ', tree not clean' : ''}`, links: [] },
            ...e.claims.map((cl) => ({ label: `claim: ${cl.text}`, verdict: cl.found ? 'found' : 'not found', tone: (cl.found ? 'ok' : 'bad') as 'ok' | 'bad', reason: cl.found ? 'the value appears in the run\'s outputs' : 'the value does not appear in the run\'s outputs', links: [] })),
            ...e.lint.map((l) => ({ label: 'script lint', verdict: 'note', tone: 'warn' as const, reason: l, links: [] })),
          ],
    },
    {
      id: 'conclusion', title: 'Conclusion',
      score: r.conclusion.verdict ?? r.conclusion.status,
      items: [{
        label: 'Conclusion', verdict: r.conclusion.verdict ?? r.conclusion.status.replace('_', ' '), tone: toneOf(r.conclusion.verdict),
        reason: [r.conclusion.reason, ...r.conclusion.numbers.map((n) => `${n.expected} vs ${n.solver}: ${n.agrees ? 'agrees' : 'differs'}`)].filter(Boolean).join(' · '),
        links: [],
      }],
    },
    {
      id: 'monitor', title: 'Monitor',
      score: r.monitor.flagged ? 'flagged' : 'no violation',
      items: [
        ...r.monitor.deterministic.map((f) => ({ label: `log line ${f.line}: ${f.kind.replace(/_/g, ' ')}`, verdict: f.severity, tone: (f.severity === 'violation' ? 'bad' : 'warn') as 'bad' | 'warn', reason: `${f.rule}: ${f.text}`, links: [] })),
        ...(r.monitor.llm ? [{ label: 'LLM monitor', verdict: r.monitor.llm.status === 'ok' ? (r.monitor.llm.unsupported ? 'unsupported flag' : 'checked') : r.monitor.llm.status, tone: 'muted' as const, reason: r.monitor.llm.reason, links: [] }] : []),
      ],
    },
  ];
  return {
    kind: r.kind, by, createdAt: r.createdAt, stale,
    summary: `Judged by ${by === 'heuristic' ? 'the heuristic pre-judge (no model)' : by} at ${r.createdAt}`,
    notes: [...r.notes, ...r.harnessErrors.map((h) => `harness error in ${h.item}: ${h.message}`),
      ...(im.unseenHunks.length ? [`${im.unseenHunks.length} hunk(s) were never shown to the judge`] : [])],
    phases,
  };
}
