import { promises as fsp } from 'node:fs';
import * as vscode from 'vscode';

/** URI scheme of the read-only files of a materialised step (and of the prepared workspace beside them). */
export const STEP_SCHEME = 'expbench-step';

/** The query of a side that does not exist (an added file's left side, a deleted file's right side). */
const NONE = 'none';

let nonce = 0;

/**
 * `expbench-step:/<label>/<path>?<absolute file>#<n>`: the path names the tab (the step and the
 * workspace-relative path), the query the file in the cache, the fragment makes each opening its
 * own document (a tree moves on to later steps; an opened document keeps what it showed).
 */
export function stepFileUri(label: string, repoPath: string, file: string | undefined): vscode.Uri {
  return vscode.Uri.from({ scheme: STEP_SCHEME, path: `/${label}/${repoPath}`, query: file ?? NONE, fragment: String(++nonce) });
}

/** Content of {@link stepFileUri} documents: the file as it is in the cache (empty when absent). Read-only by scheme. */
export class StepFileProvider implements vscode.TextDocumentContentProvider {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    if (uri.query === NONE) return '';
    return fsp.readFile(uri.query, 'utf8').catch(() => '');
  }
}
