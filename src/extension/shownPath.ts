import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';

/**
 * A file or folder as the window names it to the user: by the window's folder that holds it
 * (`labelled-sessions`, `runs/ais-decoder.eval`: the folder's name, then the path inside it), else
 * under `~` (the home folder), else in full. Only for display: commands keep the absolute path.
 */
export function shownPath(p: string): string {
  const abs = path.resolve(p);
  const under = (base: string): string | undefined => {
    const rel = path.relative(base, abs);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel)) ? rel : undefined;
  };
  for (const f of vscode.workspace.workspaceFolders ?? []) {
    if (f.uri.scheme !== 'file') continue;
    const rel = under(f.uri.fsPath);
    if (rel !== undefined) return rel ? `${f.name}/${rel}` : f.name;
  }
  const home = under(os.homedir());
  return home !== undefined ? (home ? `~/${home}` : '~') : abs;
}
