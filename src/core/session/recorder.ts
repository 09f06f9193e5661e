import * as path from 'node:path';
import { createPatch } from 'diff';
import { git } from '../git';
import { openHostRepository, type HostRepository } from '../workspace/hostRepo';
import { SerialChain } from '../util/serial';
import { isKnownCache } from '../workspace/patchRule';
import { excerpt, MAX_DIFF_CHARS } from './events';
import type { Session } from './session';

/** A command run in the task's work container, as reported by the terminal that ran it. */
export interface CommandRecord {
  command: string;
  /** null when the shell did not report one. */
  exitCode: number | null;
  durationMs: number;
  /** The command's output; cut to an excerpt (events.ts MAX_EXCERPT_CHARS) before recording. */
  output: string;
  /** Working directory in the container, when known. */
  cwd?: string;
}

/**
 * Records the baseliner's work on the workspace as events, independent of VS Code (the extension's
 * recorder forwards editor saves, file-system changes and terminal commands here):
 * - `file.edited` with a unified diff (jsdiff `createPatch`) of the file against the content last
 *   recorded for it, or, the first time, against its content at the `task start` commit (read from
 *   the session's host repository, never the workspace's `.git`; empty for a file that is not in
 *   it). Unchanged saves record nothing.
 * - `file.created` / `file.deleted` / `file.changed` (the workspace watcher, src/core/session/watcher.ts); `command.run`.
 * Paths are workspace-relative with `/`; anything outside the workspace, under `.git/` or in a known
 * cache (src/core/workspace/patchRule.ts: `__pycache__/`, `*.pyc`, …) is not recorded.
 */
export class WorkspaceRecorder {
  private readonly last = new Map<string, string>();
  private host: Promise<HostRepository> | undefined;
  private readonly chain = new SerialChain();

  constructor(private readonly session: Session) {}

  /** The workspace-relative path of `absPath`, or undefined when it is not recorded. */
  relative(absPath: string): string | undefined {
    const rel = path.relative(this.session.layout.workspace, absPath);
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
    const posix = rel.split(path.sep).join('/');
    return posix === '.git' || posix.startsWith('.git/') || isKnownCache(posix) ? undefined : posix;
  }

  /** Records a save of `absPath` with its new `content`. Resolves true when an edit was recorded. */
  recordSave(absPath: string, content: string): Promise<boolean> {
    const rel = this.relative(absPath);
    if (rel === undefined) return Promise.resolve(false);
    return this.serial(async () => {
      const before = this.last.has(rel) ? this.last.get(rel)! : await this.taskStart(rel);
      this.last.set(rel, content);
      if (before === content) return false;
      this.session.touch();
      let diff = createPatch(rel, before, content);
      const truncated = diff.length > MAX_DIFF_CHARS;
      if (truncated) diff = diff.slice(0, MAX_DIFF_CHARS);
      await this.session.events.append({ type: 'file.edited', path: rel, diff, ...(truncated ? { diffTruncated: true } : {}) });
      return true;
    });
  }

  recordCreated(absPath: string): Promise<boolean> {
    const rel = this.relative(absPath);
    if (rel === undefined) return Promise.resolve(false);
    return this.serial(async () => { await this.session.events.append({ type: 'file.created', path: rel }); return true; });
  }

  recordDeleted(absPath: string): Promise<boolean> {
    const rel = this.relative(absPath);
    if (rel === undefined) return Promise.resolve(false);
    return this.serial(async () => {
      this.last.set(rel, '');
      await this.session.events.append({ type: 'file.deleted', path: rel });
      return true;
    });
  }

  /** Records that the content of `absPath` changed on disk (`file.changed`, its size in bytes). */
  recordChanged(absPath: string, bytes: number): Promise<boolean> {
    const rel = this.relative(absPath);
    if (rel === undefined) return Promise.resolve(false);
    return this.serial(async () => {
      this.session.touch();
      await this.session.events.append({ type: 'file.changed', path: rel, bytes });
      return true;
    });
  }

  /** Records a command run in the work container (`command.run`, output cut to an excerpt). */
  recordCommand(c: CommandRecord): Promise<void> {
    return this.serial(() => this.session.events.append({
      type: 'command.run', command: c.command, exitCode: c.exitCode, durationMs: Math.max(0, c.durationMs),
      outputExcerpt: excerpt(c.output), ...(c.cwd ? { cwd: c.cwd } : {}),
    })).then(() => undefined);
  }

  /** Resolves when everything recorded so far is on disk. */
  settled(): Promise<void> { return this.chain.settled(); }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.chain.run(fn);
  }

  /** Content of `rel` at the session's `task start` commit (the host repository's); '' when absent there (or no repository). */
  private async taskStart(rel: string): Promise<string> {
    const h = await (this.host ??= openHostRepository(this.session.layout)).catch(() => undefined);
    if (!h) return '';
    return git(['cat-file', 'blob', `${h.taskStart}:${rel}`], { repo: { gitDir: h.gitDir }, okCodes: [] }).then((r) => r.text, () => '');
  }
}
