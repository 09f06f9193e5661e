import * as vscode from 'vscode';
import { git } from '../../core/git';
import { hostRepositoryOf } from '../../core/workspace/hostRepo';
import type { WorkspacePatch } from '../../core/workspace/patch';

/** URI scheme of read-only files of a workspace at its "task start" commit (the left side of the patch diff). */
export const TASK_START_SCHEME = 'expbench-task-start';

/** `expbench-task-start:/<path>?<workspace>#<commit>`; the fragment `none` reads as empty (a deleted file's right side). */
export function taskStartUri(workspace: string, commit: string, repoPath: string): vscode.Uri {
  return vscode.Uri.from({ scheme: TASK_START_SCHEME, path: `/${repoPath.replace(/^\/+/, '')}`, query: workspace, fragment: commit });
}

/**
 * Content of {@link taskStartUri} documents: `<commit>:<path>` of the session's host repository
 * (the masked "task start" tree the solver started from: never the workspace's own `.git`, nor
 * the pinned pristine checkout, which holds the ground truth). A path not in that commit reads as empty.
 */
class TaskStartProvider implements vscode.TextDocumentContentProvider {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const p = uri.path.replace(/^\/+/, '');
    if (uri.fragment === NONE) return '';
    try {
      const h = await hostRepositoryOf(uri.query);
      return (await git(['cat-file', 'blob', `${uri.fragment}:${p}`], { repo: { gitDir: h.gitDir }, subject: `${uri.query}: ${p}` })).text;
    } catch {
      return '';
    }
  }
}

/** The fragment of a side that does not exist (a deleted file's right side). */
const NONE = 'none';

let registered: vscode.Disposable | undefined;

/** Registers the task-start provider once (disposed with the extension through `subscriptions`). */
function ensureProvider(subscriptions?: vscode.Disposable[]): void {
  if (registered) return;
  registered = vscode.workspace.registerTextDocumentContentProvider(TASK_START_SCHEME, new TaskStartProvider());
  subscriptions?.push(registered);
}

/**
 * "Open the diff" of the stepper: the workspace patch in VS Code's multi-file diff editor
 * (`vscode.changes`), each changed text file as task start (read-only, left) ↔ the workspace file
 * (right); nothing is opened as an untitled buffer. Binary files and files left out of the patch
 * are listed in a notification instead. No change: an information message.
 */
export async function openPatchDiff(workspace: string, p: WorkspacePatch, subscriptions?: vscode.Disposable[]): Promise<void> {
  ensureProvider(subscriptions);
  const notes = [
    ...(p.binaryFiles.length ? [`binary files (not inlined): ${p.binaryFiles.join(', ')}`] : []),
    ...(p.leftOut ?? []).map((l) => `not in the patch: ${l.path} (${l.why})`),
  ];
  const files = p.files.filter((f) => !f.binary);
  if (files.length === 0) {
    void vscode.window.showInformationMessage(`EXP-Bench: no text changes since "task start".${notes.length ? ` ${notes.join('; ')}` : ''}`);
    return;
  }
  const file = (rel: string) => vscode.Uri.joinPath(vscode.Uri.file(workspace), ...rel.split('/'));
  const resources = files.map((f) => [
    file(f.path),
    taskStartUri(workspace, p.base, f.oldPath ?? f.path),
    f.status === 'deleted' ? taskStartUri(workspace, NONE, f.path) : file(f.path),
  ] as const);
  await vscode.commands.executeCommand('vscode.changes', 'Patch since "task start"', resources);
  if (notes.length) void vscode.window.showInformationMessage(`EXP-Bench: ${notes.join('; ')}`);
}
