import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { SessionLayout } from '../../core/layout';
import { locatePristine, type PristineSource } from '../../core/judge/pristine';
import { readManifest } from '../../core/workspace/manifest';
import type { RequirementsDoc } from './model';

/** URI scheme of the read-only "Requirements" document of a session's task. */
export const REQUIREMENTS_SCHEME = 'expbench-requirements';
/** URI scheme of read-only files of a session's pinned pristine checkout (ground truth). */
export const PRISTINE_SCHEME = 'expbench-pristine';

/** URI scheme of read-only views of the solver's workspace files (the right side of the ground-truth diff). */
export const YOURS_SCHEME = 'expbench-yours';

/** `expbench-yours:/<workspace-relative path>?<session root>`: the file as it is on disk, read-only. */
export function yoursUri(sessionRoot: string, repoPath: string): vscode.Uri {
  return vscode.Uri.from({ scheme: YOURS_SCHEME, path: `/${repoPath.replace(/^\/+/, '')}`, query: sessionRoot });
}

/** Content of {@link yoursUri} documents: the workspace file read from disk (a missing file: one explanatory line). */
export class YoursProvider implements vscode.TextDocumentContentProvider {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const file = path.join(new SessionLayout(uri.query).workspace, ...uri.path.replace(/^\/+/, '').split('/'));
    return fsp.readFile(file, 'utf8').catch(() => `(${uri.path.slice(1)} does not exist in the session's workspace)\n`);
  }
}

/** `expbench-requirements:/<taskId>/Requirements?<session root>`: one per session. */
export function requirementsUri(sessionRoot: string, taskId: string): vscode.Uri {
  return vscode.Uri.from({ scheme: REQUIREMENTS_SCHEME, path: `/${taskId}/Requirements`, query: sessionRoot });
}

/** `expbench-pristine:/<repo-relative path>?<session root>`: the file at the session's pinned commit. */
export function pristineUri(sessionRoot: string, repoPath: string): vscode.Uri {
  return vscode.Uri.from({ scheme: PRISTINE_SCHEME, path: `/${repoPath.replace(/^\/+/, '')}`, query: sessionRoot });
}

/**
 * Content of the "Requirements" documents: the document of each session root is registered by
 * the gaps controller ({@link RequirementsProvider.set}) before any URI of it is shown.
 */
export class RequirementsProvider implements vscode.TextDocumentContentProvider {
  private readonly docs = new Map<string, RequirementsDoc>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  set(sessionRoot: string, taskId: string, doc: RequirementsDoc): void {
    const same = this.docs.get(sessionRoot)?.text === doc.text;
    this.docs.set(sessionRoot, doc);
    if (!same) this.changed.fire(requirementsUri(sessionRoot, taskId));
  }

  /** The document's text and requirement lines for this session (undefined when not registered). */
  doc(sessionRoot: string): RequirementsDoc | undefined {
    return this.docs.get(sessionRoot);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.doc(uri.query)?.text ?? `The task of session ${uri.query} is not loaded: run "EXP-Bench: Run Judge and Verifier" or reopen the session.\n`;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/**
 * Content of the pristine files: read with git from the session's pinned checkout (the manifest's
 * pristine cache repository, or its clone source), never from the network or the workspace.
 * Missing checkout or file → a one-line explanation instead of content.
 */
export class PristineProvider implements vscode.TextDocumentContentProvider {
  private readonly sources = new Map<string, Promise<PristineSource | undefined>>();

  source(sessionRoot: string): Promise<PristineSource | undefined> {
    let s = this.sources.get(sessionRoot);
    if (!s) {
      s = readManifest(sessionRoot).then((m) => locatePristine(m.commit, [m.source.cacheRepo, m.source.kind === 'clone' ? m.source.location : undefined]), () => undefined);
      this.sources.set(sessionRoot, s);
    }
    return s;
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    if (uri.fragment === 'added') return ''; // the left side of a file the solver added
    const src = await this.source(uri.query);
    if (!src) return `(no pinned pristine checkout found for session ${uri.query})\n`;
    const text = await src.read(uri.path.replace(/^\/+/, ''));
    return text ?? `(${uri.path.slice(1)} does not exist at ${src.describe})\n`;
  }
}
