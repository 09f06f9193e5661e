import { promises as fsp } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import {
  addDispute, agreementMarkdown, applyEdits, applyJsonPatch, curatorQueue, editsOf, exportCurated, judgeAgreement, knownIssuesText, type TaskVerdictState,
} from '../../core/curation';
import { ExpBenchError } from '../../core/errors';
import { rejudgeAffected } from '../../core/flows/rejudge';
import { PatchOperation, ReviewStore, TaskVerdictValue, reviewFolder, type ReviewProblem } from '../../core/review';
import { findTask, loadDatasets } from '../../core/tasks/loader';
import type { Task } from '../../core/tasks/types';
import { plural } from '../../core/util/plural';
import { datasetDirs } from '../datasets';
import { fail, printJson } from '../output';

/**
 * `expbench curate verdict | resolve | queue | edit | dispute | export | agreement`: curators'
 * decisions in the review store (docs/curation.md "Verdicts, edits, disputes", docs/review.md).
 * The store: `--review DIR`, else `$EXPBENCH_REVIEW`, else `./.expbench-review`.
 */
export function registerReview(curate: Command): void {
  const store = (opts: { review?: string }) => new ReviewStore(reviewFolder(opts.review ?? process.env.EXPBENCH_REVIEW, process.cwd()));
  const common = (c: Command) => c
    .option('--review <dir>', 'the review store (default: $EXPBENCH_REVIEW, else ./.expbench-review)')
    .option('--by <name>', 'who (default: git user.email, else user.name, else $USER)');
  const withData = (c: Command) => c
    .option('--dataset <dir>', 'dataset folder (repeatable; default: $EXPBENCH_DATASETS, plus the bundled sample)', collect, [])
    .option('--no-sample', 'leave out the bundled sample task');

  common(withData(curate.command('verdict').argument('<id>', 'task id').argument('<verdict>', 'valid | invalid | needs-fix', verdictArg)))
    .requiredOption('--reason <text>', 'why')
    .option('--json', 'print the judgement')
    .description('record a curator\'s verdict on a task (several curators may disagree; `curate resolve` settles it)')
    .action(async (id: string, verdict: string, opts) => {
      await requireTask(id, opts);
      const j = await store(opts).add({ subject: { kind: 'task', task: id }, kind: 'task-verdict', value: verdict, reason: opts.reason, by: opts.by });
      if (opts.json) printJson(j);
      else console.log(`${id}: ${verdict} by ${j.by} (${await verdictContext(store(opts), id, j.id, j.by)}) — ${j.id}`);
    });

  common(curate.command('resolve').argument('<id>', 'task id'))
    .option('--verdict <verdict>', 'the verdict that holds: valid | invalid | needs-fix', verdictArg)
    .option('--resolves <ids...>', 'judgement ids settled (disputes, the verdicts in disagreement)', [])
    .requiredOption('--reason <text>', 'why this decision')
    .option('--json', 'print the judgement')
    .description('settle a disagreement or disputes of a task: who decided and why')
    .action(async (id: string, opts) => {
      if (opts.verdict === undefined && opts.resolves.length === 0) throw new ExpBenchError('BAD_INPUT', id, 'give --verdict, --resolves, or both');
      const j = await store(opts).add({ subject: { kind: 'task', task: id }, kind: 'resolution', value: { ...(opts.verdict ? { verdict: opts.verdict } : {}), resolves: opts.resolves }, reason: opts.reason, by: opts.by });
      if (opts.json) printJson(j);
      else console.log(`${id}: resolved by ${j.by}${opts.verdict ? ` as ${opts.verdict}` : ''} — ${j.id}`);
    });

  curate.command('queue').option('--review <dir>', 'the review store').option('--json', 'print the queue')
    .description('the curators\' queue: every task with verdicts, disagreements, open disputes and edits')
    .action(async (opts) => {
      const { queue, unreadable } = await curatorQueue(store(opts));
      if (opts.json) printJson(queue);
      else console.log(queueText(queue));
      // The queue of the files that could be read, then each one that could not (exit 2, as `curate lint`).
      if (unreadable.length) warnUnreadable(unreadable, 'left out of the queue');
    });

  common(withData(curate.command('edit').argument('<id>', 'task id')))
    .option('--patch <json|@file>', 'RFC 6902 operations on the task\'s entry, as JSON or @file (`[{"op":"replace","path":"/expected_outcome","value":"…"}]`)')
    .option('--reason <text>', 'why (required with --patch)')
    .option('--sessions <dirs...>', 'judged session folders: list those the task\'s edits affect', [])
    .option('--rejudge', 'judge the affected sessions again against the edited task (heuristic judge)')
    .option('--json', 'print the result')
    .description('add a versioned edit of a task\'s fields (applied on export, never in place); list the sessions it affects; re-judge them')
    .action(async (id: string, opts) => {
      const task = await requireTask(id, opts);
      const s = store(opts);
      const out: Record<string, unknown> = {};
      if (opts.patch !== undefined) {
        if (!opts.reason) throw new ExpBenchError('BAD_INPUT', id, 'an edit needs --reason');
        const text = opts.patch.startsWith('@') ? await fsp.readFile(opts.patch.slice(1), 'utf8') : opts.patch;
        let ops: unknown;
        try { ops = JSON.parse(text); } catch (e) { throw new ExpBenchError('BAD_INPUT', opts.patch, `not JSON: ${(e as Error).message}`); }
        const parsed = PatchOperation.array().min(1).safeParse(ops);
        if (!parsed.success) throw new ExpBenchError('BAD_INPUT', opts.patch, `not a list of RFC 6902 operations: ${parsed.error.issues[0].message}`);
        // The edit must apply on top of the edits before it.
        applyJsonPatch(applyEdits(task.raw, editsOf(await s.list({ task: id }), id), id), parsed.data, `${id}: the new edit`);
        out.edit = await s.add({ subject: { kind: 'task', task: id }, kind: 'task-edit', value: { patch: parsed.data }, reason: opts.reason, by: opts.by });
      }
      const all = await s.list({ task: id });
      const edits = editsOf(all, id);
      out.edits = edits;
      if (opts.sessions.length > 0) {
        const r = await rejudgeAffected({ task, judgements: all, sessionDirs: opts.sessions, rejudge: !!opts.rejudge });
        out.affected = r.affected.map((a) => ({ session: a.session, fields: a.fields, ...(a.result ? { rejudged: a.result.file } : {}), ...(a.error ? { error: a.error } : {}) }));
        if (r.affected.some((a) => a.error)) process.exitCode = 1;
      }
      if (opts.json) { printJson(out); return; }
      if (out.edit) console.log(`${id}: edit ${(out.edit as { id: string }).id} added`);
      console.log(`${id}: ${plural(edits.length, 'edit')}${edits.map((e) => `\n  ${e.at} ${e.by} ${e.id}: ${(e.value as { patch: { op: string; path: string }[] }).patch.map((o) => `${o.op} ${o.path}`).join(', ')}${e.reason ? ` — ${e.reason}` : ''}`).join('')}`);
      if (out.affected) {
        const a = out.affected as { session: string; fields: string[]; rejudged?: string; error?: string }[];
        console.log(`${plural(a.length, 'affected session')}${a.map((x) => `\n  ${x.session}: ${x.fields.join(', ')}${x.rejudged ? ` — re-judged: ${x.rejudged}` : ''}${x.error ? ` — re-judge failed: ${x.error}` : ''}`).join('')}`);
      }
    });

  common(curate.command('dispute').argument('<id>', 'task id'))
    .requiredOption('--about <field>', 'the ground-truth field disputed (expected_outcome, requirements, design_complexity, …)')
    .requiredOption('--reason <text>', 'what is wrong, and what the evidence shows')
    .option('--run <key>', 'evidence: a run (a run key or id)')
    .option('--diff <file>', 'evidence: a diff file')
    .option('--file <file>', 'evidence: another file (a log, a results file)')
    .option('--session <dir>', 'your session of this task (must be submitted): its run key is added to the evidence')
    .option('--json', 'print the judgement')
    .description('dispute a task\'s ground truth, after submit (host side) or as a reviewer; it lands in the curators\' queue')
    .action(async (id: string, opts) => {
      const evidence = [{ run: opts.run, diff: opts.diff, file: opts.file }].map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)))
        .filter((e) => Object.keys(e).length > 0);
      const j = await addDispute(store(opts), { task: id, about: opts.about, reason: opts.reason, evidence, session: opts.session, by: opts.by });
      if (opts.json) printJson(j);
      else console.log(`${id}: dispute ${j.id} about ${opts.about} by ${j.by}`);
    });

  curate.command('export').argument('[dirs...]', 'dataset folders or task files (default: $EXPBENCH_DATASETS, plus the bundled sample)')
    .requiredOption('--out <dir>', 'the export folder (new, or empty)')
    .option('--review <dir>', 'the review store')
    .option('--no-sample', 'leave out the bundled sample task')
    .option('--json', 'print the manifest')
    .description('export a curated dataset: tasks with their edits applied, verdicts, pins and environments, checksums, known issues')
    .action(async (dirs: string[], opts) => {
      const s = store(opts);
      const { judgements, problems } = await s.read();
      if (problems.length) {
        // A release missing a verdict or an edit would say what no curator decided: refused.
        warnUnreadable(problems, 'not read');
        return fail(`${plural(problems.length, 'file')} of the review store ${s.root} could not be read as judgements (above); nothing was exported: repair each, or move it out of the store, and export again`, 2);
      }
      const m = await exportCurated({ inputs: datasetDirs(dirs, { sample: opts.sample }), judgements, reviewStore: s.root, out: opts.out });
      if (opts.json) printJson(m);
      else console.log(`${knownIssuesText(m).split('\n').slice(2, 4).join('\n')}\nwritten to ${opts.out}`);
    });

  curate.command('agreement').argument('<dirs...>', 'judged session folders (or folders of them) and reference-harness judge files')
    .option('--review <dir>', 'the review store holding the labels (verdict-flip judgements)')
    .option('--resamples <n>', 'bootstrap resamples (default 2000)', positiveInt)
    .option('--json', 'print the report')
    .description('how far each judge agrees with the people who labelled its items: accuracy, Cohen\'s κ, macro-F1 with bootstrap intervals, per judge and phase')
    .action(async (dirs: string[], opts) => {
      const { judgements, problems } = await store(opts).read();
      const r = await judgeAgreement(dirs, judgements, { resamples: opts.resamples });
      if (opts.json) printJson(r);
      else {
        console.log(agreementMarkdown(r));
        for (const s of r.skipped) console.error(`expbench: ${s.file}: ${s.reason}`);
      }
      // An input or a label that could not be read: exit 2, as `curate lint` (the rest is still reported).
      if (problems.length) warnUnreadable(problems, 'its labels left out of the report');
      if ((await Promise.all(dirs.map((d) => fsp.stat(d).then(() => true, () => false)))).includes(false)) process.exitCode = 2;
    });
}

const collect = (v: string, acc: string[]) => [...acc, v];

/** One `expbench: FILE: why (…)` line per file of the store that is not a judgement, and exit code 2. */
function warnUnreadable(problems: readonly ReviewProblem[], what: string): void {
  for (const p of problems) console.error(`expbench: ${p.file}: ${p.message} (${what})`);
  process.exitCode = 2;
}

function verdictArg(v: string): string {
  if (!TaskVerdictValue.safeParse(v).success) throw new InvalidArgumentError(`the verdict is valid, invalid or needs-fix, not "${v}"`);
  return v;
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`a positive whole number, not "${v}"`);
  return n;
}

async function requireTask(id: string, opts: { dataset?: string[]; sample?: boolean }): Promise<Task> {
  const dirs = datasetDirs(undefined, opts);
  const task = findTask(await loadDatasets(dirs), id);
  if (!task) throw new ExpBenchError('TASK_NOT_FOUND', id, `no such task in ${dirs.join(', ')}`);
  return task;
}

/** One block per task: the verdict (or the disagreement), each curator's, open disputes, edits. */
export function queueText(q: TaskVerdictState[]): string {
  if (q.length === 0) return 'the queue is empty: no verdicts, disputes or edits';
  return q.map((s) => {
    const head = s.disagreement ? 'DISAGREEMENT' : s.verdict ?? 'no verdict';
    const lines = [`${s.task}: ${head}${s.decidedBy && !s.disagreement ? ` (${s.resolution && s.decidedBy === s.resolution.by ? 'resolved by ' : ''}${s.decidedBy}${s.reason ? `: ${s.reason}` : ''})` : ''}`];
    for (const j of s.byCurator) lines.push(`  verdict ${String(j.value).padEnd(9)} ${j.by} ${j.at}${j.reason ? ` — ${j.reason}` : ''}`);
    for (const d of s.openDisputes) lines.push(`  dispute ${d.id} ${d.by} about ${(d.value as { about: string }).about}${d.reason ? ` — ${d.reason}` : ''}`);
    if (s.edits.length > 0) lines.push(`  ${plural(s.edits.length, 'edit')}`);
    return lines.join('\n');
  }).join('\n');
}

/**
 * What a new verdict of `by` on `task` follows, in words: this curator's own earlier verdict
 * (`before: valid`), else `first verdict of bob`, with the other curators' latest verdicts
 * (`; ann: needs-fix`). The store's `before` (anyone's latest) stays in --json.
 */
async function verdictContext(store: ReviewStore, task: string, id: string, by: string): Promise<string> {
  const earlier = (await store.list({ task, kind: 'task-verdict' })).filter((v) => v.id !== id && v.subject.kind === 'task');
  const own = earlier.filter((v) => v.by === by).pop();
  if (own) return `before: ${String(own.value)}`;
  const others = new Map<string, unknown>();
  for (const v of earlier) others.set(v.by, v.value);
  return [`first verdict of ${by}`, ...[...others].map(([who, value]) => `${who}: ${String(value)}`)].join('; ');
}
