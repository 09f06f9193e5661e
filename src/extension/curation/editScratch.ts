import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { editedEntry, editFromScratch, scratchText } from '../../core/curation';
import { log } from '../../core/log';
import type { Judgement, PatchOperation } from '../../core/review';
import type { Task } from '../../core/tasks/types';
import { errorMessage } from '../../core/util/errors';
import { writeAtomic } from '../../core/util/fs';
import { reviewStore } from '../review/store';

const logger = log('curation.edit');

/** URI scheme of the read-only "before" and "after" sides of an edit's diff preview. */
export const EDIT_PREVIEW_SCHEME = 'expbench-curation-edit';

/** What the scratch copy of one task was made from. */
interface Scratch { task: Task; base: Record<string, unknown>; baseEdits: string[] }

/** What a save of a scratch copy did. */
export interface ScratchSaved { task: string; edit?: Judgement; operations: PatchOperation[]; reason?: string }

/**
 * Edits in the editor (issue 31, item 3): "Edit Task as JSON" writes the task's entry, with its
 * earlier edits applied, to a scratch copy (`<global storage>/curation-scratch/<task>.json`;
 * never the task file) and opens it. On each save the change from that entry becomes RFC 6902
 * operations (src/core/curation/scratchEdit.ts); the diff (before ↔ saved) is shown, and the
 * reason asked for; with a reason the operations are stored as a `task-edit` judgement (author,
 * time, reason: the review store), applied only on export and for a re-judge. Without one (Esc),
 * nothing is recorded and the scratch copy stays as saved. A scratch copy whose task got another
 * edit meanwhile is refused on save (opened again, it starts from the newest entry).
 */
export class ScratchEdits implements vscode.Disposable {
  private readonly open = new Map<string, Scratch>();
  private readonly previews = new Map<string, string>();
  private readonly subs: vscode.Disposable[] = [];
  private readonly savedEmitter = new vscode.EventEmitter<ScratchSaved>();
  /** Fires when a save was handled (recorded, or nothing to record). */
  readonly onDidSave = this.savedEmitter.event;

  constructor(private readonly dir: string, private readonly reason: (task: string, summary: string) => Promise<string | undefined>) {
    this.subs.push(
      vscode.workspace.onDidSaveTextDocument((d) => void this.saved(d)),
      vscode.workspace.registerTextDocumentContentProvider(EDIT_PREVIEW_SCHEME, { provideTextDocumentContent: (u) => this.previews.get(u.toString()) ?? '' }),
      this.savedEmitter,
    );
  }

  /** The scratch file of `task`. */
  fileOf(task: string): string {
    return path.join(this.dir, `${task.replace(/[/\\]/g, '_')}.json`);
  }

  /** Writes the scratch copy of `task` (its entry with its edits) and opens it. */
  async start(task: Task): Promise<vscode.TextEditor> {
    const all = await reviewStore().list({ task: task.id });
    const { entry, failed } = editedEntry(task, all);
    if (failed) void vscode.window.showWarningMessage(`EXP-Bench: edit ${failed.id} of ${task.id} does not apply (${failed.message}); the scratch copy starts from the edits before it.`);
    const file = this.fileOf(task.id);
    await fsp.mkdir(this.dir, { recursive: true });
    await writeAtomic(file, scratchText(entry));
    this.open.set(path.resolve(file), { task, base: entry, baseEdits: editIds(all) });
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    return vscode.window.showTextDocument(doc, { preview: false });
  }

  /** Shows the diff of `before` → `after` (entries) titled `title`. */
  async showDiff(task: string, before: Record<string, unknown>, after: Record<string, unknown>, title: string): Promise<void> {
    const stamp = Date.now().toString(36);
    const left = vscode.Uri.from({ scheme: EDIT_PREVIEW_SCHEME, path: `/${task}/before.json`, query: stamp });
    const right = vscode.Uri.from({ scheme: EDIT_PREVIEW_SCHEME, path: `/${task}/after.json`, query: stamp });
    this.previews.set(left.toString(), scratchText(before));
    this.previews.set(right.toString(), scratchText(after));
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  }

  /**
   * Handles a save of `doc` when it is a scratch copy; public for tests (a save goes through here).
   * @returns what was done, or undefined when `doc` is not a scratch copy
   */
  async saved(doc: vscode.TextDocument): Promise<ScratchSaved | undefined> {
    const s = this.open.get(path.resolve(doc.uri.fsPath));
    if (!s || doc.uri.scheme !== 'file') return undefined;
    const id = s.task.id;
    try {
      const ops = editFromScratch(s.base, doc.getText(), doc.uri.fsPath);
      if (ops.length === 0) {
        void vscode.window.showInformationMessage(`EXP-Bench: the scratch copy of ${id} equals the task with its edits: nothing to record.`);
        return this.fire({ task: id, operations: [] });
      }
      const all = await reviewStore().list({ task: id });
      if (editIds(all).join() !== s.baseEdits.join()) {
        throw new Error(`${id} got another edit since this scratch copy was made: run "Edit Task as JSON" again (it starts from the newest entry) and redo the change`);
      }
      const after = JSON.parse(doc.getText()) as Record<string, unknown>;
      await this.showDiff(id, s.base, after, `${id}: the edit (before ↔ saved; applied on export)`);
      const summary = ops.map((o) => `${o.op} ${o.path}`).join(', ');
      const reason = await this.reason(id, summary);
      if (!reason) {
        void vscode.window.showInformationMessage(`EXP-Bench: no reason given: the edit of ${id} was not recorded (the scratch copy keeps it; save again to record).`);
        return this.fire({ task: id, operations: ops });
      }
      const edit = await reviewStore().add({ subject: { kind: 'task', task: id }, kind: 'task-edit', value: { patch: ops }, reason });
      this.open.set(path.resolve(doc.uri.fsPath), { task: s.task, base: after, baseEdits: [...s.baseEdits, edit.id] });
      logger.info(`${id}: edit ${edit.id} recorded (${summary})`);
      return this.fire({ task: id, edit, operations: ops, reason });
    } catch (e) {
      void vscode.window.showErrorMessage(`EXP-Bench: ${errorMessage(e)}`);
      logger.warn(`${id}: the scratch copy's save was not recorded: ${errorMessage(e)}`);
      return this.fire({ task: id, operations: [] });
    }
  }

  private fire(r: ScratchSaved): ScratchSaved {
    this.savedEmitter.fire(r);
    return r;
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
  }
}

function editIds(all: readonly Judgement[]): string[] {
  return all.filter((j) => j.kind === 'task-edit' && j.subject.kind === 'task').map((j) => j.id).sort();
}
