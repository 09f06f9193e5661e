import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import type { SessionLayout } from '../layout';
import { errorMessage } from '../util/errors';
import { readRegularFile } from '../untrusted';

/** Who serves a session's proctored window now: `private/serve.json`. */
export interface ServeHolder { pid: number; startedAt: string; url?: string }

/** The file that says who serves a session (in `private/`: never mounted, never the solver's). */
export function serveLockFile(layout: SessionLayout): string {
  return path.join(layout.private, 'serve.json');
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}

/**
 * Claims the serving of a session's proctored window for this process (`private/serve.json`,
 * created exclusively): a second `baseline serve` of a folder already served is refused before it
 * starts anything, so it never stops the shared container or removes the channel's sockets when it
 * ends. A file left by a serve whose process is gone is replaced.
 * @returns a release function (removes the file when it is still this process's)
 * @throws ExpBenchError `BAD_INPUT` naming the session folder and the running serve (pid, since when, its address)
 */
export async function claimServe(layout: SessionLayout): Promise<{ release: () => Promise<void>; setUrl: (url: string) => Promise<void> }> {
  const file = serveLockFile(layout);
  await fsp.mkdir(layout.private, { recursive: true });
  const mine: ServeHolder = { pid: process.pid, startedAt: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      await fsp.writeFile(file, JSON.stringify(mine), { flag: 'wx' });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 1) {
        throw new ExpBenchError('BAD_INPUT', layout.root, `cannot claim the serving of this session (${file}): ${errorMessage(e)}`, { cause: e });
      }
    }
    let holder: ServeHolder | undefined;
    try { holder = JSON.parse((await readRegularFile(file, { noFollow: true }))?.toString('utf8') ?? 'null') as ServeHolder; } catch { holder = undefined; }
    if (holder && Number.isSafeInteger(holder.pid) && holder.pid > 0 && holder.pid !== process.pid && alive(holder.pid)) {
      throw new ExpBenchError('BAD_INPUT', layout.root,
        `is already served by another baseline serve (pid ${holder.pid}, since ${holder.startedAt}${holder.url ? `, ${holder.url.replace(/\?tkn=.*$/, '')}` : ''}); nothing was started: stop that one first (Ctrl-C), or serve another session folder`);
    }
    await fsp.rm(file, { force: true });
  }
  return {
    setUrl: async (url) => { await fsp.writeFile(file, JSON.stringify({ ...mine, url: url.replace(/\?tkn=.*$/, '') })); },
    release: async () => {
      const now = JSON.parse((await readRegularFile(file, { noFollow: true }).catch(() => undefined))?.toString('utf8') ?? 'null') as ServeHolder | null;
      if (now?.pid === process.pid) await fsp.rm(file, { force: true });
    },
  };
}
