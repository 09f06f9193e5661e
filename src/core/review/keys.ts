import { createHash } from 'node:crypto';
import * as os from 'node:os';
import { ExpBenchError } from '../errors';
import { git } from '../git';
import { SessionLayout } from '../layout';
import { readJsonIfExists } from '../util/fs';

/**
 * Run keys (the `run` of a subject) and the judge's identity. A run key is stable: the same run
 * gives the same key on every machine, so two reviewers' judgements of it meet in one folder.
 */

/** The run key of trajectory `trajectoryId` in the file whose content has SHA-256 `sha256Hex`: `file:<sha>#<id>`. */
export function runKeyForFile(sha256Hex: string, trajectoryId: string): string {
  if (!/^[0-9a-f]{64}$/i.test(sha256Hex)) throw new ExpBenchError('BAD_INPUT', sha256Hex, 'is not a SHA-256 in hex (64 characters)');
  return `file:${sha256Hex.toLowerCase()}#${trajectoryId}`;
}

/**
 * The run key of a session folder: `session:` and the first 16 hex characters of the SHA-256 of
 * its manifest's task id, workspace commit and preparation start (`taskId`, `workspaceCommit`,
 * `createdAt` of `private/manifest.json`, joined by NUL): the same for a copy or a move of the
 * folder, different for two preparations of one task.
 * @throws ExpBenchError `SESSION_INVALID` naming the manifest when it is absent or lacks those members;
 *   `BAD_INPUT` when it is not JSON
 */
export async function runKeyForSession(sessionDir: string): Promise<string> {
  const file = new SessionLayout(sessionDir).manifest;
  const m = await readJsonIfExists<Record<string, unknown>>(file);
  const parts = [m?.taskId, m?.workspaceCommit, m?.createdAt];
  if (!parts.every((p) => typeof p === 'string' && p.length > 0)) {
    throw new ExpBenchError('SESSION_INVALID', file, m === undefined ? 'is missing: the folder is not a prepared session' : 'lacks taskId, workspaceCommit or createdAt: the session was not fully prepared');
  }
  return `session:${createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16)}`;
}

let me: Promise<string> | undefined;

/**
 * Who is judging: git's `user.email` (else `user.name`) from the user's own configuration, else
 * `$USER` / the OS account name, else `unknown`. Read once per process.
 */
export function whoAmI(): Promise<string> {
  me ??= (async () => {
    for (const key of ['user.email', 'user.name']) {
      const r = await git(['config', '--get', key], { repo: 'none', userConfig: true, okCodes: [1], subject: `git config ${key}` }).catch(() => undefined);
      const v = r?.code === 0 ? r.text.trim() : '';
      if (v) return v;
    }
    const user = process.env.USER || process.env.USERNAME || safeUserName();
    return user || 'unknown';
  })();
  return me;
}

function safeUserName(): string {
  try { return os.userInfo().username; } catch { return ''; }
}
