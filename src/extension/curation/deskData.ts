import * as os from 'node:os';
import * as path from 'node:path';
import { affectedSessions, buildQueue, curatedTaskFile, curationFileFor, editedEntry, lintTasks, readCurationFile, readValidationRuns, resolveVerdicts, taskHistory, type DeskQueue } from '../../core/curation';
import { describeOperations } from '../../core/curation/scratchEdit';
import type { LintReport } from '../../core/curation/types';
import { editsOf } from '../../core/curation/edits';
import { SessionLayout } from '../../core/layout';
import { log } from '../../core/log';
import { whoAmI, type Judgement, type PatchOperation } from '../../core/review';
import type { Task } from '../../core/tasks/types';
import { errorMessage } from '../../core/util/errors';
import { exists, readJsonIfExists } from '../../core/util/fs';
import { plural } from '../../core/util/plural';
import type { PageMessage, QueueMessage } from '../../protocol/curation';
import { reviewStore } from '../review/store';
import type { SessionIndex } from '../sessionIndex';
import type { TaskStore } from '../taskStore';

const logger = log('curation.desk');

/** Where validation runs are written and read: `~/.expbench/validations/<task id with ->/<time>/` (docs/curation.md). */
export function validationsDir(): string {
  return path.join(os.homedir(), '.expbench', 'validations');
}

/** A judged session's figures from its `private/judge/latest.json`, when it has one. */
interface JudgeSummary { kind: string; at: string; D: number | null; I: number | null; C: boolean | null }

/**
 * What the curator's desk shows, read on demand: the tasks of the window's datasets, the task
 * lint over them (file rules, and repository rules at the curation files' pins; kept until
 * {@link refreshLint}), the review store's judgements, the validation runs, and the session
 * folder index. Free of webviews (deskPanel.ts shows it).
 */
export class DeskData {
  private lint: Promise<LintReport> | undefined;

  constructor(private readonly store: TaskStore, private readonly sessions: SessionIndex, private readonly judgeLabel: () => Promise<string>) {}

  /** The lint report (run once, again after {@link refreshLint}). */
  lintReport(): Promise<LintReport> {
    this.lint ??= lintTasks({ inputs: this.store.dirs() }).catch((e: unknown) => {
      this.lint = undefined;
      throw e;
    });
    return this.lint;
  }

  refreshLint(): void {
    this.lint = undefined;
  }

  async task(id: string): Promise<Task | undefined> {
    return this.store.find(id);
  }

  /** The queue, with what the lint ran over and what could not be read. */
  async queue(filter: QueueMessage['filter']): Promise<QueueMessage> {
    const [loaded, report, read, validations] = await Promise.all([
      this.store.get(), this.lintReport(), reviewStore().read(), readValidationRuns(validationsDir()),
    ]);
    const q: DeskQueue = buildQueue({ tasks: loaded.tasks, findings: report.findings, judgements: read.judgements, validations: validations.runs });
    const problems = [
      ...report.unreadable.map((u) => `${u.input}: ${u.message}`),
      ...read.problems.map((p) => `${p.file}: ${p.message}`),
      ...validations.problems.map((p) => `${p.file}: ${p.message}`),
    ];
    const pins = report.repositories.filter((r) => r.paper).length;
    const lintScope = `lint: ${plural(report.tasks, 'task')} in ${plural(report.files.length, 'file')}, file rules${pins ? ` and repository rules at ${plural(pins, 'pin')} of curation files` : ' only (no curation file pins a repository)'}`;
    return { type: 'queue', ...q, counts: { ...q.counts }, filter, lintScope, problems, store: reviewStore().root };
  }

  /** Every judgement of task `id` in the review store. */
  async judgements(id: string): Promise<Judgement[]> {
    return reviewStore().list({ task: id });
  }

  /** The session folders of task `id` the index knows (the sessions folder), newest first. */
  async sessionsOf(id: string): Promise<string[]> {
    await this.sessions.refresh();
    return ((await this.sessions.byTask()).get(id) ?? []).map((s) => s.root);
  }

  /** Task `id`'s page. @throws when the task is not in the datasets */
  async page(task: Task): Promise<PageMessage> {
    const id = task.id;
    const [all, report, validations, sessionDirs, me, judge] = await Promise.all([
      this.judgements(id), this.lintReport(), readValidationRuns(validationsDir(), id), this.sessionsOf(id), whoAmI(), this.judgeLabel(),
    ]);
    const { entry, failed } = editedEntry(task, all);
    const state = resolveVerdicts(all).find((s) => s.task === id);
    const q = buildQueue({ tasks: [task], findings: report.findings, judgements: all, validations: validations.runs }).rows[0];
    const sessions = await Promise.all(sessionDirs.map(async (dir) => {
      const judged = await exists(path.join(new SessionLayout(dir).judge, 'latest.json')).catch(() => false);
      const affected = (await affectedSessions([dir], id, entry).catch(() => []))[0]?.fields ?? [];
      const curated = await readJsonIfExists<{ edits?: string[] }>(curatedTaskFile(dir)).catch(() => undefined);
      const summary = judged ? await judgeSummary(path.join(new SessionLayout(dir).judge, 'latest.json')) : undefined;
      return { session: dir, judged, affected: judged ? affected : [], ...(summary ? { judge: summary } : {}), ...(curated?.edits ? { curatedEdits: curated.edits } : {}) };
    }));
    const pinRead = await readCurationFile(curationFileFor(task.file)).catch(() => undefined);
    const str = (k: string) => (typeof entry[k] === 'string' ? entry[k] as string : '');
    const list = (k: string) => (Array.isArray(entry[k]) ? (entry[k] as unknown[]).map((x) => (typeof x === 'string' ? x : JSON.stringify(x))) : typeof entry[k] === 'string' && entry[k] ? [entry[k] as string] : []);
    const design = (['constants', 'independent', 'dependent'] as const).flatMap((kind) => task.design[kind].map((v) => ({ kind, name: v.name, description: v.description })));
    const edits = editsOf(all, id);
    let base = task.raw;
    const editViews = edits.map((e) => {
      const ops = (e.value as { patch: PatchOperation[] }).patch;
      const lines = describeOperations(base, ops);
      try { base = editedEntry({ ...task, raw: base }, [e]).entry; } catch { /* a failed edit is named in failedEdit */ }
      return { id: e.id, at: e.at, by: e.by, ...(e.reason ? { reason: e.reason } : {}), operations: lines };
    });
    return {
      type: 'page', task: id, paper: q.paper, ...(task.paper?.title ? { paperTitle: task.paper.title } : {}), taskType: task.type, file: task.file,
      question: str('question') || str('hypothesis'), method: str('method'), expectedOutcome: str('expected_outcome'),
      requirements: list('requirements'), source: list('source'), maskedSource: list('masked_source'), design,
      ...(pinRead?.curation?.repository ? { pin: { url: pinRead.curation.repository.url, commit: pinRead.curation.repository.commit } } : {}),
      states: q.states, ...(state?.verdict ? { verdict: state.verdict } : {}), ...(state?.decidedBy ? { decidedBy: state.decidedBy } : {}),
      ...(state?.reason ? { reason: state.reason } : {}),
      disagreement: state?.disagreement ?? false, curators: q.curators,
      disagreeing: state?.disagreement ? state.byCurator.map((j) => j.id) : [],
      lint: report.findings.filter((f) => f.task === id).map((f) => ({ rule: f.rule, severity: f.severity, pointer: f.pointer, message: f.message })),
      validations: validations.runs.map(({ task: _t, ...v }) => v),
      sessions, history: taskHistory(all, id),
      openDisputes: (state?.openDisputes ?? []).map((d) => ({
        id: d.id, at: d.at, by: d.by, about: (d.value as { about: string }).about, ...(d.reason ? { reason: d.reason } : {}),
        evidence: ((d.value as { evidence?: Record<string, unknown>[] }).evidence ?? []).map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => typeof v === 'string')) as Record<string, string>),
      })),
      edits: editViews, ...(failed ? { failedEdit: failed } : {}), judge, me,
    };
  }
}

async function judgeSummary(file: string): Promise<JudgeSummary | undefined> {
  try {
    const r = await readJsonIfExists<{ kind?: string; createdAt?: string; design?: { recall?: number | null }; implementation?: { score?: number | null }; conclusion?: { verdict?: string | null } }>(file);
    if (!r) return undefined;
    return { kind: r.kind ?? '?', at: r.createdAt ?? '', D: r.design?.recall ?? null, I: r.implementation?.score ?? null, C: r.conclusion?.verdict ? r.conclusion.verdict === 'correct' : null };
  } catch (e) {
    logger.warn(`${file}: ${errorMessage(e)}`);
    return undefined;
  }
}
