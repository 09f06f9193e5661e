import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { errorMessage } from './errors';
import { kindOf } from './fs';

/**
 * A folder that a command makes whole or not at all (an export): it is built in a temporary
 * sibling `.<name>.<pid>.<8 hex>.partial` and renamed onto `out` once complete, so that a failure
 * (a full disk) or a kill never leaves a half-made `out` that the next run would refuse as not
 * empty. A failed build removes its sibling; a killed one's sibling is removed by the next build
 * beside it (its process gone).
 */
const PARTIAL = /^\.(.+)\.(\d+)\.[0-9a-f]{8}\.partial$/;

/** True when `name` is the temporary sibling of a {@link buildFolder} (of any process). */
export function isPartialFolder(name: string): boolean {
  return PARTIAL.test(path.basename(name));
}

/**
 * Checks that `out` can receive a new folder: it does not exist, or is an empty folder.
 * @throws ExpBenchError `BAD_INPUT` naming `out` when it is a file (or another non-folder), a
 *   folder with entries, or cannot be read; `what` names the command's output in the advice
 */
export async function assertNewFolder(out: string, what: string): Promise<void> {
  const st = await fsp.lstat(out).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)))
    .catch((e: unknown) => { throw new ExpBenchError('BAD_INPUT', out, `cannot be used as the ${what} folder: ${errorMessage(e)}`, { cause: e }); });
  if (!st) return;
  if (!st.isDirectory()) {
    throw new ExpBenchError('BAD_INPUT', out, `is ${st.isFile() ? 'a file' : kindOf(st)}, not a folder; nothing was written: choose a new folder for the ${what} (--out)`);
  }
  const names = await fsp.readdir(out);
  if (names.length > 0) throw new ExpBenchError('BAD_INPUT', out, `is not empty (${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''}); nothing in it was changed: choose a new folder for the ${what} (--out)`);
}

/**
 * Builds a folder at `out` (absent, or an empty folder) through `build(tmp)`, which writes into
 * `tmp`, a new folder beside `out`; `out` appears only once `build` has resolved (one rename).
 * @returns what `build` returns
 * @throws what {@link assertNewFolder} throws (nothing is made then); when `build` or the rename
 *   fails, the temporary folder is removed and the error is thrown as an ExpBenchError naming
 *   `out` (a full disk said as such, with what to do); `out` is left as it was
 */
export async function buildFolder<T>(out: string, what: string, build: (tmp: string) => Promise<T>): Promise<T> {
  const abs = path.resolve(out);
  await assertNewFolder(abs, what);
  const parent = path.dirname(abs);
  await fsp.mkdir(parent, { recursive: true }).catch((e: unknown) => { throw failure(abs, what, e); });
  await sweepPartials(parent);
  const tmp = path.join(parent, `.${path.basename(abs)}.${process.pid}.${randomBytes(4).toString('hex')}.partial`);
  try {
    await fsp.mkdir(tmp);
    const result = await build(tmp);
    // rename(2) replaces an empty folder; one that gained entries meanwhile is refused (ENOTEMPTY).
    await fsp.rename(tmp, abs);
    return result;
  } catch (e) {
    await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw failure(abs, what, e, tmp);
  }
}

/** The error of a failed build, naming `out`; an ExpBenchError about something else than the folder (an input) is kept as it is. */
function failure(out: string, what: string, e: unknown, tmp?: string): ExpBenchError {
  const code = (e as NodeJS.ErrnoException)?.code;
  const inner = (e instanceof ExpBenchError ? e.message : errorMessage(e)).split(tmp ?? '\0').join(out);
  if (code === 'ENOSPC' || code === 'EDQUOT' || /\bdisk is full\b|ENOSPC|EDQUOT/.test(inner)) {
    return new ExpBenchError('BAD_INPUT', out, `the ${what} was not written: the disk is full; nothing was left behind: free some space and run the command again`, { cause: e });
  }
  if (code === 'ENOTEMPTY' || code === 'EEXIST') {
    return new ExpBenchError('BAD_INPUT', out, `gained entries while the ${what} was made; nothing in it was changed: choose a new folder for the ${what} (--out)`, { cause: e });
  }
  if (e instanceof ExpBenchError && (tmp === undefined || !e.message.includes(tmp))) return e;
  return new ExpBenchError('BAD_INPUT', out, `the ${what} was not written (${inner}); nothing was left behind: run the command again once that is fixed`, { cause: e });
}

/** Removes the temporary siblings in `dir` of builds whose process is gone. Never throws. */
async function sweepPartials(dir: string): Promise<void> {
  for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
    const m = PARTIAL.exec(name);
    if (!m || Number(m[2]) === process.pid || alive(Number(m[2]))) continue;
    await fsp.rm(path.join(dir, name), { recursive: true, force: true }).catch(() => undefined);
  }
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}
