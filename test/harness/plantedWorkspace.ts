// A session workspace with what a solver can plant to run code in a trusted VS Code window
// (issue 26): an fsmonitor hook and a clean/smudge filter in the workspace's own `.git/config` (run
// by VS Code's Git extension on its first `git status`), and a `.vscode/tasks.json` task with
// `"runOn": "folderOpen"` (run by VS Code's task system when the folder opens trusted). Each one,
// when it runs, appends a line to its own marker file in a folder OUTSIDE the workspace.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The marker files, one per planted vector. */
export const PLANTED_MARKERS = ['fsmonitor-ran', 'filter-ran', 'task-ran'] as const;

/**
 * Plants the three vectors in `workspace` (a git work tree with a `.git` folder and at least one
 * tracked file), writing their scripts and, when they run, their markers into `markersDir`.
 * Re-planting a copy with another `markersDir` points the copy at its own markers.
 * @throws Error when `workspace/.git` is not a folder or git has no tracked file there
 */
export function plantWorkspace(workspace: string, markersDir: string): void {
  const gitDir = path.join(workspace, '.git');
  if (!fs.statSync(gitDir).isDirectory()) throw new Error(`${gitDir} is not a folder`);
  fs.mkdirSync(markersDir, { recursive: true });
  const marker = (name: string): string => path.join(markersDir, name);
  const script = (name: string, body: string): string => {
    const file = path.join(markersDir, name);
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return file;
  };
  // each line: the time, then the command lines of the git that ran it and of git's parent (who ran git)
  const who = "$(date +%s) git: $(tr '\\0' ' ' < /proc/$PPID/cmdline) by: $(tr '\\0' ' ' < /proc/$(awk '{print $4}' /proc/$PPID/stat)/cmdline)";
  const fsmonitor = script('fsmonitor.sh', `echo "${who}" >> '${marker('fsmonitor-ran')}'\nexit 1`);
  const filter = script('filter.sh', `echo "${who}" >> '${marker('filter-ran')}'\ncat`);
  const config = (key: string, value: string): void => { execFileSync('git', ['config', '--file', path.join(gitDir, 'config'), key, value]); };
  config('core.fsmonitor', fsmonitor);
  config('filter.planted.clean', filter);
  config('filter.planted.smudge', filter);
  fs.mkdirSync(path.join(gitDir, 'info'), { recursive: true });
  fs.writeFileSync(path.join(gitDir, 'info', 'attributes'), '* filter=planted\n');
  // a tracked file whose stat no longer matches the index: `git status` hashes it again, through the clean filter
  const tracked = execFileSync('git', ['-C', workspace, '-c', 'core.fsmonitor=false', 'ls-files', '-z'], { encoding: 'utf8' }).split('\0').filter(Boolean);
  if (tracked.length === 0) throw new Error(`${workspace}: git tracks no file`);
  const touched = new Date(Date.UTC(2001, 0, 1));
  fs.utimesSync(path.join(workspace, tracked[0]), touched, touched);
  fs.mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
  fs.writeFileSync(path.join(workspace, '.vscode', 'tasks.json'), JSON.stringify({
    version: '2.0.0',
    tasks: [{ label: 'planted', type: 'shell', command: `date +%s >> '${marker('task-ran')}'`, runOptions: { runOn: 'folderOpen' }, presentation: { reveal: 'never' } }],
  }, null, 2));
}

/** The markers that exist in `markersDir` (the vectors that ran). */
export function markersWritten(markersDir: string): string[] {
  return PLANTED_MARKERS.filter((m) => fs.existsSync(path.join(markersDir, m)));
}

/** What the markers in `markersDir` say (each line: when, the git that ran the vector, and who ran that git), for a failure message. */
export function markerLines(markersDir: string): string {
  return markersWritten(markersDir).map((m) => `${m}: ${fs.readFileSync(path.join(markersDir, m), 'utf8').trim()}`).join('\n');
}
