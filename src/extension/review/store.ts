import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ReviewStore, reviewFolder } from '../../core/review';
import { MARKER_PATH } from '../../core/session/marker';
import { setting } from '../settings';

/**
 * The review store of this window (docs/review.md): the folder of `expbench.review.folder`, else
 * `<first workspace folder>/.expbench-review`, else `~/.expbench/review`. A session's workspace
 * (it holds the session marker) is never the base: a store there would be part of the solver's
 * patch. Read on each call, so a changed setting takes effect at once.
 */
export function reviewStore(): ReviewStore {
  const first = vscode.workspace.workspaceFolders?.[0]?.uri;
  const base = first?.scheme === 'file' && !fs.existsSync(path.join(first.fsPath, MARKER_PATH)) ? first.fsPath : undefined;
  return new ReviewStore(reviewFolder(setting('review.folder'), base));
}
