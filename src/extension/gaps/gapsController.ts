import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { readJudgeRecord } from '../../core/judge/session';
import type { RequirementVerdict } from '../../core/judge/types';
import { log } from '../../core/log';
import { readTaskSnapshot } from '../../core/session/marker';
import { SessionLayout } from '../../core/layout';
import { HARNESS_FILES } from '../../core/layout';
import type { Task } from '../../core/tasks/types';
import { makePatch } from '../../core/workspace/patch';
import type { GapsAction } from '../../protocol/messages';
import type { BriefPanels } from '../brief/briefPanel';
import { anchorRange, anchorsOf, buildDiagnostics, GapsCodeLensProvider, hunkRange, type GapsState } from './annotations';
import { PRISTINE_SCHEME, PristineProvider, pristineUri, REQUIREMENTS_SCHEME, RequirementsProvider, requirementsUri, YOURS_SCHEME, YoursProvider, yoursUri } from './documents';
import { gapsView, rangeLabel, requirementsDocument, requirementsFromRecord } from './model';
import { sessionPins, withTimeline } from './timelineLinks';
import type { StepPin } from '../../core/viewer/pins';
import { openPatchDiff } from './patchDiff';
import { errorMessage } from '../../core/util/errors';
import { reviewVerdict, withReview } from '../review/gapsReview';

const logger = log('gaps');
/** Quiet time after a save before the patch is compared with the judged one, ms. */
const SAVE_DEBOUNCE_MS = 300;

/** What the gaps feature needs from the rest of the extension. */
export interface GapsDeps {
  /** Root of this window's session folder (undefined when the window is not on a session). */
  windowRoot(): Promise<string | undefined>;
  /** A task by id from the configured datasets (undefined when unknown). */
  findTask(id: string): Promise<Task | undefined>;
  /** The window's briefs: the gap report is their section `gaps`. */
  briefs: BriefPanels;
}

/** Argument of {@link GapsController.openDiff} (and of the `expbench.openGroundTruthDiff` command). */
export interface OpenDiffArg {
  /** Session root; default the session shown. */
  root?: string;
  /** 1-based requirement index. */
  index: number;
  /** Position in the requirement's cited hunks; default 0. */
  hunk?: number;
  /** Position in the requirement's anchored ranges (annotations.ts `anchorsOf`): the lines selected on your side. */
  anchor?: number;
}

/**
 * Shows the gaps of one judged session (the window's, or one given by its root) in the editor:
 * Problems-panel diagnostics and CodeLens (see annotations.ts), the read-only Requirements and
 * pristine documents (documents.ts), the ground-truth diff, and the gap report section (`gaps`) of
 * the task's brief webview. Reads `private/judge/latest.json`; nothing is written.
 *
 * When the patch changes: on every save of a file in the session's workspace (debounced), the
 * workspace patch is compared with the judged one (the patch the last "Run Judge and Verifier"
 * judged, else `private/harness/patch.diff` of the submission, else the patch at refresh time).
 * If it differs, the editor annotations (diagnostics and CodeLens) are CLEARED, because their
 * line numbers no longer describe the code, and the gap report stays with a "stale" banner; when
 * the patch is the judged one again (an undo), the annotations come back. Judging again refreshes all.
 */
export class GapsController implements vscode.Disposable {
  readonly diagnostics = vscode.languages.createDiagnosticCollection('expbench-gaps');
  readonly requirements = new RequirementsProvider();
  readonly pristine = new PristineProvider();
  readonly codeLens = new GapsCodeLensProvider(() => (this.stale ? undefined : this.current));
  private current: (GapsState & { judgedPatch: string }) | undefined;
  private stale = false;
  /** The shown session's verdicts and flags on its steps ("Show in Timeline"), and the item `revealItem` asked for. */
  private pins: StepPin[] = [];
  private focus: string | undefined;
  private readonly judgedPatches = new Map<string, string>();
  private saveTimer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly deps: GapsDeps) {
    this.disposables = [
      this.diagnostics, this.requirements, this.codeLens,
      vscode.workspace.registerTextDocumentContentProvider(REQUIREMENTS_SCHEME, this.requirements),
      vscode.workspace.registerTextDocumentContentProvider(PRISTINE_SCHEME, this.pristine),
      vscode.workspace.registerTextDocumentContentProvider(YOURS_SCHEME, new YoursProvider()),
      vscode.languages.registerCodeLensProvider([{ scheme: 'file' }, { scheme: REQUIREMENTS_SCHEME }], this.codeLens),
      vscode.workspace.onDidSaveTextDocument((d) => this.onSave(d)),
      deps.briefs.sections.provide((panel) => { if (this.current && panel.task.id === this.current.taskId) this.post(); }),
      deps.briefs.sections.handle('gaps', (call) => this.handle(call)),
    ];
  }

  /** The session shown, whether its annotations are stale, and its record (for tests). */
  get shown(): { root: string; taskId: string; stale: boolean } | undefined {
    return this.current && { root: this.current.root, taskId: this.current.taskId, stale: this.stale };
  }

  /** Records the patch a judge run is judging (so that later saves compare against it). */
  rememberJudgedPatch(root: string, patch: string): void {
    this.judgedPatches.set(path.resolve(root), patch);
  }

  /**
   * Reads the session's latest judgement and shows it (annotations, documents, gap report).
   * @param rootArg session root; default this window's session
   * @returns what is shown, or undefined when there is no session or no judgement (annotations cleared)
   * @throws ExpBenchError BAD_INPUT when latest.json is not a judge record
   */
  async refresh(rootArg?: string): Promise<GapsState | undefined> {
    const root = rootArg ? path.resolve(rootArg) : await this.deps.windowRoot();
    if (!root) return undefined;
    const layout = new SessionLayout(root);
    const record = await readJudgeRecord(path.join(layout.judge, 'latest.json'));
    if (!record) {
      this.clear();
      logger.info(`${root}: no judgement yet (private/judge/latest.json)`);
      return undefined;
    }
    const task = (await this.deps.findTask(record.taskId)) ?? (await readTaskSnapshot(root));
    const doc = task && task.id === record.taskId ? requirementsDocument(task) : requirementsFromRecord(record);
    this.requirements.set(root, record.taskId, doc);
    const now = await this.workspacePatch(root);
    const judgedPatch = this.judgedPatches.get(root)
      ?? (await fsp.readFile(path.join(layout.harness, HARNESS_FILES.patch), 'utf8').catch(() => undefined))
      ?? now ?? '';
    this.pins = await sessionPins(root);
    if (this.current?.root !== root) this.focus = undefined;
    this.current = { root, taskId: record.taskId, record, doc, judgedPatch };
    this.stale = now !== undefined && now !== judgedPatch;
    await this.apply();
    logger.info(`${root}: showing the ${record.kind} judgement of ${record.createdAt}${this.stale ? ' (stale: the patch changed since)' : ''}`);
    return this.current;
  }

  /** Clears every annotation and forgets the session shown. */
  clear(): void {
    this.current = undefined;
    this.stale = false;
    this.diagnostics.clear();
    this.codeLens.refresh();
  }

  private async workspacePatch(root: string): Promise<string | undefined> {
    try {
      return (await makePatch(new SessionLayout(root).workspace)).patch;
    } catch (e) {
      logger.warn(`${root}: cannot make the patch: ${errorMessage(e)}`);
      return undefined;
    }
  }

  private async apply(): Promise<void> {
    this.diagnostics.clear();
    if (this.current && !this.stale) for (const [uri, ds] of await buildDiagnostics(this.current)) this.diagnostics.set(uri, ds);
    this.codeLens.refresh();
    this.post();
  }

  private post(): void {
    const c = this.current;
    if (!c) return;
    // each judge item with the curators' accept / flip (src/extension/review/gapsReview.ts)
    void withReview(withTimeline(gapsView(c.record, this.stale), c.record, this.pins, this.focus), c.record, c.root).then((view) => { if (c === this.current) this.deps.briefs.post(c.taskId, 'gaps', view); });
  }

  private onSave(d: vscode.TextDocument): void {
    const c = this.current;
    if (!c || d.uri.scheme !== 'file') return;
    const rel = path.relative(new SessionLayout(c.root).workspace, d.uri.fsPath);
    if (rel.startsWith('..') || path.isAbsolute(rel)) return;
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => void this.checkPatch().catch((e) => logger.warn(`patch check failed: ${errorMessage(e)}`)), SAVE_DEBOUNCE_MS);
  }

  /** Compares the workspace patch with the judged one and clears or restores the annotations. */
  async checkPatch(): Promise<boolean> {
    const c = this.current;
    if (!c) return false;
    const now = await this.workspacePatch(c.root);
    const stale = now !== undefined && now !== c.judgedPatch;
    if (c === this.current && stale !== this.stale) {
      this.stale = stale;
      logger.info(`${c.root}: ${stale ? 'the patch changed since the judgement: annotations cleared' : 'the patch is the judged one again: annotations restored'}`);
      await this.apply();
    }
    return stale;
  }

  private verdict(index: number): { s: GapsState; v: RequirementVerdict } {
    const s = this.current;
    const v = s?.record.implementation.verdicts.find((x) => x.index === index);
    if (!s || !v) throw new Error(`no judged requirement ${index} is shown: run "EXP-Bench: Run Judge and Verifier" first`);
    return { s, v };
  }

  /**
   * Opens the ground-truth range (pinned pristine file, left) beside the solver's file (right, a
   * read-only view of the workspace file, `expbench-yours:`) in a diff editor titled
   * `R<n>: <truth file>:<lines> ↔ <your file>`, the ground-truth range and the anchored range
   * (the matched lines, else the cited hunk) revealed and selected. Researcher mode only: the
   * proctored solver's window (src/solver/) has no gaps feature. Without a cited hunk: the
   * pristine file beside the workspace file of the same path (or alone when the solver has none);
   * without a ground-truth reference: the solver's hunk alone.
   */
  async openDiff(arg: OpenDiffArg): Promise<void> {
    if (arg.root && path.resolve(arg.root) !== this.current?.root) await this.refresh(arg.root);
    const { s, v } = this.verdict(arg.index);
    const ws = new SessionLayout(s.root).workspace;
    const anchors = anchorsOf(v);
    const anchor = arg.anchor !== undefined ? anchors[arg.anchor] : v.anchors?.length ? anchors[0] : undefined;
    const hunk = anchor ? { path: anchor.path, newStart: anchor.startLine, newEnd: anchor.endLine } : v.hunks[arg.hunk ?? 0];
    const gt = v.groundTruth.find((g) => g.path === hunk?.path) ?? v.groundTruth[0];
    const col = { viewColumn: vscode.ViewColumn.One, preview: true };
    if (!gt) {
      if (hunk) await this.revealHunk(hunk.path, hunk.newStart, hunk.newEnd);
      else await this.showRequirement(v.index);
      return;
    }
    const left = pristineUri(s.root, gt.path);
    const gtRange = new vscode.Range(Math.max(0, gt.startLine - 1), 0, Math.max(0, gt.endLine - 1), Number.MAX_SAFE_INTEGER);
    const rightPath = hunk?.path ?? gt.path;
    const rightFile = path.join(ws, rightPath);
    const right = yoursUri(s.root, rightPath);
    const exists = await fsp.stat(rightFile).then(() => true, () => false);
    if (!exists) {
      await vscode.window.showTextDocument(left, { ...col, selection: gtRange });
      return;
    }
    const rightLines = (await fsp.readFile(rightFile, 'utf8')).split('\n');
    const rightRange = anchor ? anchorRange(anchor, rightLines) : hunk ? hunkRange(hunk, rightLines) : new vscode.Range(0, 0, 0, 0);
    const title = `R${v.index}: ${rangeLabel(path.basename(gt.path), gt.startLine, gt.endLine)} ↔ ${path.basename(rightPath)}`;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { ...col, selection: rightRange });
    for (let i = 0; i < 20; i++) {
      const original = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === left.toString());
      if (original) {
        original.selection = new vscode.Selection(gtRange.start, original.document.lineAt(Math.min(gtRange.end.line, original.document.lineCount - 1)).range.end);
        original.revealRange(gtRange, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Opens the workspace file `repoPath` with new-side lines `newStart..newEnd` selected. */
  async revealHunk(repoPath: string, newStart: number, newEnd: number): Promise<void> {
    const s = this.current;
    if (!s) throw new Error('no judged session is shown');
    const file = path.join(new SessionLayout(s.root).workspace, repoPath);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    const r = hunkRange({ path: repoPath, newStart, newEnd }, doc.getText().split('\n'));
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, selection: r, preview: true });
  }

  /** "Open the diff": the workspace's patch since "task start" in the multi-file diff editor (patchDiff.ts). */
  async openPatch(workspace: string): Promise<void> {
    await openPatchDiff(workspace, await makePatch(workspace), this.disposables);
  }

  /**
   * `expbench.gaps.revealItem`: shows the gap report of the session `root` (its brief opened or
   * revealed) with the row of `item` (`requirement:2`, `monitor:8`…) marked and scrolled to.
   * @returns whether the session has a judgement (else nothing is shown)
   */
  async revealItem(root: string, item: string): Promise<boolean> {
    const s = path.resolve(root) === this.current?.root ? this.current : await this.refresh(root);
    if (!s) return false;
    const task = (await this.deps.findTask(s.taskId)) ?? (await readTaskSnapshot(s.root));
    if (task) this.deps.briefs.show(task, { sessionDir: s.root });
    this.focus = item;
    this.post();
    return true;
  }

  /** Opens the Requirements document at requirement `index`. */
  async showRequirement(index: number): Promise<void> {
    const s = this.current;
    if (!s) throw new Error('no judged session is shown');
    const line = s.doc.lines.get(index) ?? 0;
    await vscode.window.showTextDocument(requirementsUri(s.root, s.taskId), { viewColumn: vscode.ViewColumn.One, preview: true, selection: new vscode.Range(line, 0, line, 0) });
  }

  /** `expbench.openGroundTruthDiff` without an argument: pick a requirement. */
  async pickAndOpenDiff(): Promise<void> {
    const s = this.current ?? await this.refresh();
    if (!s) { void vscode.window.showWarningMessage('EXP-Bench: no judgement to show: run "EXP-Bench: Run Judge and Verifier" first.'); return; }
    const pick = await vscode.window.showQuickPick(s.record.implementation.verdicts.map((v) => ({
      label: `Requirement ${v.index}: ${v.verdict ?? 'harness error'}`, detail: v.requirement, index: v.index,
    })), { placeHolder: 'Ground truth beside your code for which requirement?' });
    if (pick) await this.openDiff({ index: pick.index });
  }

  private async handle(a: GapsAction): Promise<void> {
    switch (a.action) {
      case 'openDiff': await this.openDiff(a.payload); break;
      case 'revealHunk': await this.revealHunk(a.payload.path, a.payload.newStart, a.payload.newEnd); break;
      case 'showRequirement': await this.showRequirement(a.payload.index); break;
      case 'rerun': await vscode.commands.executeCommand('expbench.runJudgeAndVerifier', this.current?.root); break;
      case 'showInTimeline': if (this.current) await vscode.commands.executeCommand('expbench.trajectory.open', { uri: this.current.root, step: a.payload.step }); break;
      case 'reviewVerdict': if (this.current && await reviewVerdict(this.current.record, this.current.root, a.payload.item, a.payload.accept)) this.post(); break;
    }
  }

  dispose(): void {
    clearTimeout(this.saveTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
