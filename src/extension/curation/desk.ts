import * as path from 'node:path';
import * as vscode from 'vscode';
import { editedEntry, exportCurated, type ExportManifest } from '../../core/curation';
import { editsOf } from '../../core/curation/edits';
import { rejudgeAffected, type RejudgeResult } from '../../core/flows/rejudge';
import { log } from '../../core/log';
import { TaskVerdictValue, type Judgement, type PatchOperation } from '../../core/review';
import type { Task } from '../../core/tasks/types';
import { errorMessage } from '../../core/util/errors';
import { plural } from '../../core/util/plural';
import type { DeskFilterView, DeskWebviewMessage, PageMessage, QueueMessage } from '../../protocol/curation';
import type { CommandSpec } from '../commands';
import type { JudgeConfig } from '../judgeConfig';
import { withCancellableProgress } from '../progress';
import { reviewStore } from '../review/store';
import type { SessionIndex } from '../sessionIndex';
import { pickTask } from '../taskCommands';
import type { TaskStore } from '../taskStore';
import { DeskData } from './deskData';
import { DeskPanels } from './deskPanel';
import { ScratchEdits } from './editScratch';

const logger = log('curation.desk');

export const SHOW_QUEUE_COMMAND = 'expbench.curation.showQueue';
export const OPEN_TASK_PAGE_COMMAND = 'expbench.curation.openTaskPage';
export const RECORD_VERDICT_COMMAND = 'expbench.curation.recordVerdict';
export const RESOLVE_COMMAND = 'expbench.curation.resolve';
export const ANSWER_DISPUTE_COMMAND = 'expbench.curation.answerDispute';
export const EDIT_TASK_COMMAND = 'expbench.curation.editTask';
export const REJUDGE_COMMAND = 'expbench.curation.rejudge';
export const EXPORT_COMMAND = 'expbench.curation.export';

const VERDICT_LABEL: Record<TaskVerdictValue, string> = { valid: 'valid', invalid: 'invalid', 'needs-fix': 'needs fix' };

/** Arguments of the desk's commands (each member optional: what is missing is asked for). */
export interface VerdictArgs { task?: string; verdict?: TaskVerdictValue; reason?: string }
export interface DisputeAnswerArgs { task?: string; dispute?: string; verdict?: TaskVerdictValue; reason?: string }
export interface ResolveArgs { task?: string; verdict?: TaskVerdictValue; resolves?: string[]; reason?: string }

/** The refusal's button: VS Code's New Window (a window on no folder is no solver's window). */
const NEW_WINDOW = 'Open a New Window';

/**
 * The curator's desk in VS Code (issue 31; docs/curation.md "The curator's desk"): the queue, the
 * task pages, verdicts, resolutions, answers to disputes, edits through a scratch copy, re-judging
 * the sessions an edit affects with the configured judge, and the curated export. Every command
 * is refused in a solver's window (one on a task session): the desk shows ground truth.
 */
export class CuratorDesk implements vscode.Disposable {
  readonly data: DeskData;
  readonly panels: DeskPanels;
  readonly edits: ScratchEdits;

  constructor(
    extensionUri: vscode.Uri, storageDir: string, private readonly store: TaskStore, sessions: SessionIndex,
    private readonly judgeConfig: () => Promise<JudgeConfig>, private readonly solverWindow: () => Promise<boolean>,
  ) {
    this.data = new DeskData(store, sessions, async () => ((await judgeConfig()).endpoint ? `LLM judge (${(await judgeConfig()).endpoint!.model})` : 'heuristic judge (no judge model is configured)'));
    this.panels = new DeskPanels(extensionUri, this.data, (task, m) => this.act(task, m));
    this.edits = new ScratchEdits(path.join(storageDir, 'curation-scratch'), (task, summary) => askText(`Reason for the edit of ${task} (${summary}); the diff is beside. Esc: not recorded`, 'what was wrong, and what the paper or the repository says'));
    this.edits.onDidSave((r) => {
      if (!r.edit) return;
      void this.afterEdit(r.task, r.edit);
    });
  }

  /** What a task page's buttons do. */
  private async act(task: string, m: DeskWebviewMessage): Promise<void> {
    switch (m.type) {
      case 'recordVerdict': await vscode.commands.executeCommand(RECORD_VERDICT_COMMAND, { task, verdict: m.verdict, reason: m.reason }); break;
      case 'resolve': await vscode.commands.executeCommand(RESOLVE_COMMAND, { task, verdict: m.verdict, reason: m.reason }); break;
      case 'answerDispute': await vscode.commands.executeCommand(ANSWER_DISPUTE_COMMAND, { task, dispute: m.dispute, verdict: m.verdict, reason: m.reason }); break;
      case 'editTask': await vscode.commands.executeCommand(EDIT_TASK_COMMAND, task); break;
      case 'rejudge': await vscode.commands.executeCommand(REJUDGE_COMMAND, { task }); break;
      case 'validate': await vscode.commands.executeCommand('expbench.curation.validate', task); await this.panels.refresh(); break;
      case 'showEdit': await this.showEdit(task, m.edit); break;
      case 'openRecord': await vscode.window.showTextDocument(vscode.Uri.file(path.join(m.dir, 'validation.json')), { preview: false }); break;
      case 'openFinding': { const t = await this.store.find(task); if (t) await vscode.window.showTextDocument(vscode.Uri.file(t.file), { preview: false }); break; }
      default: break;
    }
  }

  private async refused(): Promise<boolean> {
    if (!(await this.solverWindow())) return false;
    // not awaited: the command returns at once; the button opens a window on no folder, where the desk opens
    void vscode.window.showWarningMessage('EXP-Bench: the curator\'s desk shows ground truth; this window holds a task session, so it is not opened here. Open it in another window (File → New Window, Ctrl+Shift+N; with start.sh, the curator\'s link it prints).', NEW_WINDOW)
      .then((pick) => (pick === NEW_WINDOW ? vscode.commands.executeCommand('workbench.action.newWindow') : undefined));
    return true;
  }

  private async taskOf(arg: unknown): Promise<Task | undefined> {
    const id = typeof arg === 'string' ? arg : arg && typeof arg === 'object' && typeof (arg as { task?: unknown }).task === 'string' ? (arg as { task: string }).task : undefined;
    return pickTask(this.store, id ?? arg);
  }

  commands(): CommandSpec[] {
    return [
      {
        id: SHOW_QUEUE_COMMAND,
        execute: async (arg?: { filter?: DeskFilterView }): Promise<QueueMessage | undefined> => ((await this.refused()) ? undefined : this.panels.showQueue(arg?.filter)),
      },
      {
        id: OPEN_TASK_PAGE_COMMAND,
        execute: async (arg?: unknown): Promise<PageMessage | undefined> => {
          if (await this.refused()) return undefined;
          const t = await this.taskOf(arg);
          return t && this.panels.showTask(t.id);
        },
      },
      { id: RECORD_VERDICT_COMMAND, execute: (arg?: VerdictArgs | string) => this.recordVerdict(typeof arg === 'string' ? { task: arg } : arg ?? {}) },
      { id: RESOLVE_COMMAND, execute: (arg?: ResolveArgs | string) => this.resolve(typeof arg === 'string' ? { task: arg } : arg ?? {}) },
      { id: ANSWER_DISPUTE_COMMAND, execute: (arg?: DisputeAnswerArgs | string) => this.answerDispute(typeof arg === 'string' ? { task: arg } : arg ?? {}) },
      {
        id: EDIT_TASK_COMMAND,
        execute: async (arg?: unknown): Promise<string | undefined> => {
          if (await this.refused()) return undefined;
          const t = await this.taskOf(arg);
          if (!t) return undefined;
          const ed = await this.edits.start(t);
          return ed.document.uri.fsPath;
        },
      },
      { id: REJUDGE_COMMAND, execute: (arg?: { task?: string } | string) => this.rejudge(typeof arg === 'string' ? arg : arg?.task) },
      { id: EXPORT_COMMAND, execute: (arg?: { out?: string }) => this.exportDataset(arg?.out) },
    ];
  }

  /** Records a curator's verdict on a task (asks the task, the verdict and the reason when missing). */
  async recordVerdict(a: VerdictArgs): Promise<Judgement | undefined> {
    if (await this.refused()) return undefined;
    const task = await this.taskOf(a.task);
    if (!task) return undefined;
    const verdict = a.verdict ?? await pickVerdict(`Verdict on ${task.id}`);
    if (!verdict) return undefined;
    const reason = a.reason?.trim() || await askText(`Why is ${task.id} ${VERDICT_LABEL[verdict]}?`, 'what you checked and what you found');
    if (!reason) return undefined;
    const j = await reviewStore().add({ subject: { kind: 'task', task: task.id }, kind: 'task-verdict', value: verdict, reason });
    this.panels.notice(task.id, 'info', `verdict ${VERDICT_LABEL[verdict]} recorded by ${j.by}${j.before !== undefined ? ` (before: ${String(j.before)})` : ''}`);
    await this.panels.refresh();
    return j;
  }

  /** Settles a disagreement: a resolution with the verdict that holds, resolving the verdicts in disagreement. */
  async resolve(a: ResolveArgs): Promise<Judgement | undefined> {
    if (await this.refused()) return undefined;
    const task = await this.taskOf(a.task);
    if (!task) return undefined;
    const page = await this.data.page(task);
    const verdict = a.verdict ?? await pickVerdict(`The verdict that holds for ${task.id}${page.disagreement ? ` (${page.curators.map((c) => `${c.by}: ${c.verdict}`).join(', ')})` : ''}`);
    if (!verdict) return undefined;
    const reason = a.reason?.trim() || await askText(`Why ${VERDICT_LABEL[verdict]} for ${task.id}?`, 'the decision and what it rests on');
    if (!reason) return undefined;
    const resolves = a.resolves ?? page.disagreeing;
    const j = await reviewStore().add({ subject: { kind: 'task', task: task.id }, kind: 'resolution', value: { verdict, resolves }, reason });
    this.panels.notice(task.id, 'info', `resolved as ${VERDICT_LABEL[verdict]} by ${j.by}`);
    await this.panels.refresh();
    return j;
  }

  /** Answers an open dispute: a resolution listing it, with a verdict when given. */
  async answerDispute(a: DisputeAnswerArgs): Promise<Judgement | undefined> {
    if (await this.refused()) return undefined;
    const task = await this.taskOf(a.task);
    if (!task) return undefined;
    const page = await this.data.page(task);
    let dispute = a.dispute;
    if (!dispute) {
      if (page.openDisputes.length === 0) { void vscode.window.showInformationMessage(`EXP-Bench: ${task.id} has no open dispute.`); return undefined; }
      const pick = await vscode.window.showQuickPick(page.openDisputes.map((d) => ({ label: `${d.about}: ${d.reason ?? ''}`, description: `${d.by}, ${d.at.slice(0, 16).replace('T', ' ')}`, id: d.id })), { title: `Answer a dispute of ${task.id}` });
      dispute = pick?.id;
    }
    if (!dispute) return undefined;
    const d = page.openDisputes.find((x) => x.id === dispute);
    if (!d) throw new Error(`${dispute} is not an open dispute of ${task.id}`);
    const reason = a.reason?.trim() || await askText(`Answer to the dispute about ${d.about} (${d.by})`, 'what was checked, and whether the ground truth changes (an edit) or stands');
    if (!reason) return undefined;
    const j = await reviewStore().add({ subject: { kind: 'task', task: task.id }, kind: 'resolution', value: { ...(a.verdict ? { verdict: a.verdict } : {}), resolves: [dispute] }, reason });
    this.panels.notice(task.id, 'info', `dispute ${dispute} answered by ${j.by}`);
    await this.panels.refresh();
    return j;
  }

  /** After an edit: the page again, and the affected sessions offered a re-judge. */
  private async afterEdit(id: string, edit: Judgement): Promise<void> {
    await this.panels.refresh();
    if (this.panels.hasPage(id)) await this.panels.showTask(id);
    const page = this.panels.posted.pages.get(id) ?? (await this.data.task(id).then((t) => t && this.data.page(t)));
    const affected = page?.sessions.filter((s) => s.affected.length > 0) ?? [];
    this.panels.notice(id, 'info', `edit ${edit.id} recorded by ${edit.by} (applied on export)${affected.length ? `; ${plural(affected.length, 'judged session')} affected` : '; no judged session affected'}`);
    if (affected.length === 0) return;
    const pick = await vscode.window.showInformationMessage(`EXP-Bench: the edit of ${id} affects ${plural(affected.length, 'judged session')}.`, 'Re-judge');
    if (pick === 'Re-judge') await this.rejudge(id);
  }

  /** Re-judges the sessions of `id` the edits affect, with the configured judge (an LLM when one is set, else the heuristic). */
  async rejudge(id?: string): Promise<RejudgeResult[] | undefined> {
    if (await this.refused()) return undefined;
    const task = await this.taskOf(id);
    if (!task) return undefined;
    const [all, dirs, config] = await Promise.all([reviewStore().list({ task: task.id }), this.data.sessionsOf(task.id), this.judgeConfig()]);
    const r = await withCancellableProgress(`EXP-Bench: re-judging the sessions of ${task.id} against its edits`, (_report, signal) => rejudgeAffected({
      task, judgements: all, sessionDirs: dirs, rejudge: true, judge: { ...config, signal },
    }));
    const failed = r.affected.filter((a) => a.error);
    const text = `${plural(r.affected.length - failed.length, 'session')} re-judged by the ${config.endpoint ? `LLM judge (${config.endpoint.model})` : 'heuristic judge'}${failed.length ? `; ${failed.length} failed: ${failed.map((f) => f.error).join('; ')}` : ''}`;
    this.panels.notice(task.id, failed.length ? 'error' : 'info', text);
    logger.info(`${task.id}: ${text}`);
    await this.panels.refresh();
    return r.affected;
  }

  /** The diff of one recorded edit (the entry before it ↔ after it). */
  private async showEdit(id: string, editId: string): Promise<void> {
    const task = await this.store.find(id);
    if (!task) return;
    const edits = editsOf(await reviewStore().list({ task: id }), id);
    const i = edits.findIndex((e) => e.id === editId);
    if (i < 0) throw new Error(`no edit ${editId} of ${id}`);
    const before = editedEntry(task, edits.slice(0, i)).entry;
    const after = editedEntry({ ...task, raw: before }, [edits[i]]).entry;
    await this.edits.showDiff(id, before, after, `${id}: edit ${editId} by ${edits[i].by} (${(edits[i].value as { patch: PatchOperation[] }).patch.length} operations)`);
  }

  /** Writes the curated dataset (the window's datasets, the review store) to `out` (asked for when absent). */
  async exportDataset(out?: string): Promise<ExportManifest | undefined> {
    if (await this.refused()) return undefined;
    const folder = out ?? (await vscode.window.showOpenDialog({ title: 'Export the curated dataset into (a new or empty folder)', canSelectFolders: true, canSelectFiles: false, openLabel: 'Export here' }))?.[0]?.fsPath;
    if (!folder) return undefined;
    try {
      const s = reviewStore();
      const m = await exportCurated({ inputs: this.store.dirs(), judgements: await s.list(), reviewStore: s.root, out: folder });
      void vscode.window.showInformationMessage(`EXP-Bench: exported ${plural(m.counts.tasks, 'task')} (${m.counts.edited} edited, ${m.counts.valid} valid, ${m.counts.needsFix} need a fix, ${m.counts.invalid} invalid, ${m.counts.unjudged} unjudged) to ${folder}.`);
      return m;
    } catch (e) {
      void vscode.window.showErrorMessage(`EXP-Bench: cannot export: ${errorMessage(e)}`);
      return undefined;
    }
  }

  dispose(): void {
    this.panels.dispose();
    this.edits.dispose();
  }
}

async function pickVerdict(title: string): Promise<TaskVerdictValue | undefined> {
  const p = await vscode.window.showQuickPick((['valid', 'invalid', 'needs-fix'] as const).map((v) => ({ label: VERDICT_LABEL[v], v })), { title });
  return p?.v;
}

async function askText(title: string, placeHolder: string): Promise<string | undefined> {
  const v = await vscode.window.showInputBox({ title, placeHolder, ignoreFocusOut: true, validateInput: (s) => (s.trim() ? undefined : 'Give a reason') });
  return v?.trim() || undefined;
}
