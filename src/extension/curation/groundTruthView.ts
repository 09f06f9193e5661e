import * as vscode from 'vscode';
import { groundTruthMarkdown, readGroundTruth, type GroundTruth } from '../../core/curation/groundTruth';
import { resolveTaskPin } from '../../core/flows/prepareTask';
import { git } from '../../core/git';
import { log } from '../../core/log';
import { errorMessage } from '../../core/util/errors';
import { isNotebookPath, notebookTextLayout, parseNotebook, resolveNotebookRange } from '../../core/util/notebook';
import type { CommandSpec } from '../commands';
import { withCancellableProgress } from '../progress';
import { pickTask } from '../taskCommands';
import type { TaskStore } from '../taskStore';

const logger = log('groundTruth');

/** `expbench-gt:/<taskId>/Ground truth.md`: the curator's read-only ground-truth document of a task. */
export const GROUND_TRUTH_SCHEME = 'expbench-gt';
/** `expbench-gt-file:/<path>?<taskId>`: a file of the task's pinned pristine checkout (read with git from the cache). */
export const GROUND_TRUTH_FILE_SCHEME = 'expbench-gt-file';

const docUri = (taskId: string) => vscode.Uri.from({ scheme: GROUND_TRUTH_SCHEME, path: `/${taskId}/Ground truth.md` });
const fileUri = (taskId: string, file: string) => vscode.Uri.from({ scheme: GROUND_TRUTH_FILE_SCHEME, path: `/${file}`, query: taskId });

/**
 * The curator's ground-truth view (issue 20, item 1), researcher windows only: a read-only
 * Markdown document per task (design variables by role, requirements with their references,
 * expected outcome, usage instructions, masked paths with blob ids; src/core/curation/groundTruth.ts)
 * read at the paper's pin (curation file, else the task's repository at HEAD). Each reference is a
 * link (Ctrl+click) that opens its file of the pinned pristine checkout, read-only, with its range
 * selected and highlighted. Refused in a solver's window (one whose folder is a task session).
 */
export class GroundTruthView implements vscode.Disposable {
  private readonly truths = new Map<string, GroundTruth>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly highlight = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'), isWholeLine: true,
  });

  constructor(private readonly store: TaskStore, private readonly solverWindow: () => Promise<boolean>) {
    const docs: vscode.TextDocumentContentProvider = {
      onDidChange: this.changed.event,
      provideTextDocumentContent: (uri) => {
        const g = this.truths.get(uri.path.replace(/^\/|\/Ground truth\.md$/g, ''));
        return g ? groundTruthMarkdown(g) : 'Run "EXP-Bench: Show Ground Truth (Curator)" again: this task\'s ground truth is not loaded.\n';
      },
    };
    const files: vscode.TextDocumentContentProvider = {
      provideTextDocumentContent: async (uri) => {
        const g = this.truths.get(uri.query);
        if (!g) return 'Not loaded: run "EXP-Bench: Show Ground Truth (Curator)" again.\n';
        const text = await this.blob(uri.query, uri.path.slice(1));
        if (text === undefined) return `${uri.path.slice(1)} is not a file at ${g.commit}.\n`;
        return isNotebookPath(uri.path) ? notebookView(text, uri.path.slice(1)) : text;
      },
    };
    this.disposables.push(
      this.changed, this.highlight,
      vscode.workspace.registerTextDocumentContentProvider(GROUND_TRUTH_SCHEME, docs),
      vscode.workspace.registerTextDocumentContentProvider(GROUND_TRUTH_FILE_SCHEME, files),
      vscode.languages.registerDocumentLinkProvider({ scheme: GROUND_TRUTH_SCHEME }, { provideDocumentLinks: (d) => this.links(d) }),
    );
  }

  commands(): CommandSpec[] {
    return [
      { id: 'expbench.showGroundTruth', execute: (arg?: unknown) => this.show(arg) },
      { id: 'expbench.openGroundTruthRef', execute: (taskId: string, req: number, ref: number) => this.openRef(taskId, req, ref) },
    ];
  }

  /** Shows the ground truth of a task (picked, or a task id / tree node). @returns the document's URI, or undefined */
  async show(arg?: unknown): Promise<vscode.Uri | undefined> {
    if (await this.solverWindow()) {
      void vscode.window.showWarningMessage('EXP-Bench: the ground truth is for curators; this window holds a task session, so it is not shown here.');
      return undefined;
    }
    const task = await pickTask(this.store, arg);
    if (!task) return undefined;
    try {
      const g = await withCancellableProgress(`EXP-Bench: reading the ground truth of ${task.id}`, async (report, signal) => {
        const pin = await resolveTaskPin(task);
        report(`${pin.source} at ${pin.commit ?? 'HEAD'}`);
        return readGroundTruth(task, { source: pin.source, commit: pin.commit, signal });
      });
      this.truths.set(task.id, g);
      const uri = docUri(task.id);
      this.changed.fire(uri);
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
      await vscode.window.showTextDocument(doc, { preview: false });
      return uri;
    } catch (e) {
      logger.error(`ground truth of ${task.id}: ${errorMessage(e)}`);
      void vscode.window.showErrorMessage(`EXP-Bench: cannot read the ground truth of ${task.id}: ${errorMessage(e)}`);
      return undefined;
    }
  }

  /** Opens reference `ref` (0-based) of requirement `req` (1-based) in the pinned checkout, its range selected and highlighted. */
  async openRef(taskId: string, req: number, ref: number): Promise<vscode.TextEditor | undefined> {
    const r = this.truths.get(taskId)?.requirements.find((x) => x.index === req)?.refs[ref];
    if (!r?.file) {
      void vscode.window.showWarningMessage(`EXP-Bench: ${r ? `${r.path} is ${r.status} in the pinned tree` : 'no such reference'}.`);
      return undefined;
    }
    let doc = await vscode.workspace.openTextDocument(fileUri(taskId, r.file));
    const last = Math.max(0, doc.lineCount - 1);
    const ranges: vscode.Range[] = [];
    if (isNotebookPath(r.file)) {
      // a notebook is shown as its cells (percent format); the reference is resolved onto them
      doc = await vscode.languages.setTextDocumentLanguage(doc, 'python');
      const nbRanges = await this.notebookRanges(taskId, r.file, r.startLine, r.endLine, r.cell);
      for (const [s, e] of nbRanges) ranges.push(new vscode.Range(Math.min(s - 1, last), 0, Math.min(e - 1, last), doc.lineAt(Math.min(e - 1, last)).text.length));
    } else if (r.startLine !== null && r.cell === undefined) {
      const start = Math.min(r.startLine - 1, last);
      const end = r.endLine === null ? start : Math.min(r.endLine - 1, last);
      ranges.push(new vscode.Range(start, 0, end, doc.lineAt(end).text.length));
    }
    const range = ranges.length ? ranges[0].union(ranges[ranges.length - 1]) : new vscode.Range(0, 0, 0, 0);
    const editor = await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, selection: range });
    if (ranges.length) editor.setDecorations(this.highlight, ranges);
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    return editor;
  }

  /** A file of the task's pinned checkout, or undefined when it is not a file there. */
  private async blob(taskId: string, file: string): Promise<string | undefined> {
    const g = this.truths.get(taskId);
    if (!g) return undefined;
    const r = await git(['cat-file', 'blob', `${g.commit}:${file}`], { repo: { gitDir: g.repo }, okCodes: [128] });
    return r.code === 0 ? r.text : undefined;
  }

  /** Lines (1-based, inclusive) of the notebook's cell view that a reference resolves to (src/core/util/notebook.ts). */
  private async notebookRanges(taskId: string, file: string, startLine: number | null, endLine: number | null, cell?: number): Promise<Array<[number, number]>> {
    const text = await this.blob(taskId, file);
    if (text === undefined) return [];
    try {
      const nb = parseNotebook(text, file);
      const layout = notebookTextLayout(nb);
      const resolved = startLine === null && cell === undefined ? undefined : resolveNotebookRange(nb, startLine ?? 1, endLine ?? startLine ?? 1, cell);
      if (!resolved && cell !== undefined && nb.cells[cell]) return [[layout.firstLine[cell] - 1, layout.firstLine[cell] - 1]];
      return (resolved?.spans ?? []).map((sp) => [layout.firstLine[sp.cell] + sp.startLine - 1, layout.firstLine[sp.cell] + sp.endLine - 1]);
    } catch (e) {
      logger.warn(`${file}: ${errorMessage(e)}`);
      return [];
    }
  }

  /** A link on every reference of the document (the `- \`path…\`` lines under each requirement). */
  private links(d: vscode.TextDocument): vscode.DocumentLink[] {
    const taskId = d.uri.path.replace(/^\/|\/Ground truth\.md$/g, '');
    const g = this.truths.get(taskId);
    if (!g) return [];
    const out: vscode.DocumentLink[] = [];
    let req = 0;
    let ref = 0;
    let inRequirements = false;
    for (let i = 0; i < d.lineCount; i++) {
      const text = d.lineAt(i).text;
      if (text.startsWith('## ')) { inRequirements = text === '## Requirements'; continue; }
      if (!inRequirements) continue;
      const head = /^(\d+)\. /.exec(text);
      if (head) { req = Number(head[1]); ref = 0; continue; }
      const m = /^ {3}- `([^`]+)`/.exec(text);
      if (!m || req === 0) continue;
      const r = g.requirements.find((x) => x.index === req)?.refs[ref];
      if (r?.file) {
        const link = new vscode.DocumentLink(new vscode.Range(i, 5, i, 5 + m[1].length),
          vscode.Uri.parse(`command:expbench.openGroundTruthRef?${encodeURIComponent(JSON.stringify([taskId, req, ref]))}`));
        link.tooltip = `Open ${r.file} at ${g.commit.slice(0, 12)}`;
        out.push(link);
      }
      ref++;
    }
    return out;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** A notebook's text for the read-only view: its cells (percent format), or the raw text with a first line saying why when it is not nbformat JSON. */
function notebookView(text: string, file: string): string {
  try {
    return notebookTextLayout(parseNotebook(text, file)).text + '\n';
  } catch (e) {
    return `# ${errorMessage(e)}: shown as stored\n${text}`;
  }
}
