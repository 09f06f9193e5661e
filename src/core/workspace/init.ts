import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { log } from '../log';
import { git } from '../git';

const logger = log('workspace.init');

/** Name of the initialised empty repository kept in the pristine cache folder ({@link initWorkspaceRepo}). */
export const INIT_TEMPLATE = 'workspace-init.git';

/**
 * Formats the workspace builder writes itself (loose SHA-1 objects, a loose branch file), pinned
 * whatever the git version's defaults: `GIT_DEFAULT_HASH` (git ≥ 2.29) and
 * `GIT_DEFAULT_REF_FORMAT` (git ≥ 2.45; older versions only know these formats).
 */
const PINNED_FORMATS = { GIT_DEFAULT_HASH: 'sha1', GIT_DEFAULT_REF_FORMAT: 'files' };

/**
 * Makes `dir` an empty repository as `git init --template= --initial-branch=main` does: branch
 * `main`, no sample hooks, no `description`, SHA-1 objects and files refs ({@link PINNED_FORMATS}).
 *
 * With `cacheDir`: the first repository git makes there is kept as `<cacheDir>/workspace-init.git`
 * ({@link INIT_TEMPLATE}), and later workspaces on the same file system get a copy of it instead of
 * a git process (measured on an 18-file repository: starting `git init` held the preparation
 * 4–8 ms of 30; the copy takes about 1 ms). The copy is only made where git's own probes would
 * answer the same (it probes the file system when it initialises: executable bits, symbolic
 * links, case folding): the template and `dir`'s parent must be on the same device. A template
 * that is not what git init leaves (damaged) is removed and made again; delete it to have it
 * made again after a git upgrade (an older one is still a valid repository for a newer git).
 *
 * May run while the source is being read; pass its promise to `buildWorkspaceRepo`.
 *
 * @throws ExpBenchError `GIT_FAILED` when git init fails; the file system's error when the copy fails.
 */
export async function initWorkspaceRepo(dir: string, signal?: AbortSignal, cacheDir?: string): Promise<void> {
  const template = cacheDir ? path.join(cacheDir, INIT_TEMPLATE) : undefined;
  if (template) {
    const [t, p] = await Promise.all([fsp.stat(template).catch(() => undefined), fsp.stat(path.dirname(dir)).catch(() => undefined)]);
    if (t && p && t.dev === p.dev) {
      if (await isTemplate(template)) {
        await copySkeleton(template, path.join(dir, '.git'));
        return;
      }
      logger.warn(`${template}: not an empty repository made by git init (damaged?); removed, made again`);
      await fsp.rm(template, { recursive: true, force: true }).catch((e) => logger.warn(`${template}: cannot remove: ${(e as Error).message}`));
    }
  }
  await git(['init', '--quiet', '--template=', '--initial-branch=main', dir], { signal, subject: dir, env: PINNED_FORMATS });
  if (template) await keepTemplate(path.join(dir, '.git'), template);
}

/**
 * Whether `template` looks as `git init --template= --initial-branch=main` leaves a repository:
 * `HEAD` naming `refs/heads/main`, a `config` with a `[core]` section, `objects/pack/` and
 * `refs/heads/` folders, and no object or branch yet.
 */
async function isTemplate(template: string): Promise<boolean> {
  const read = (f: string) => fsp.readFile(path.join(template, f), 'utf8').catch(() => undefined);
  const list = (f: string) => fsp.readdir(path.join(template, f)).catch(() => undefined);
  const [head, config, packs, heads, objects] = await Promise.all([read('HEAD'), read('config'), list('objects/pack'), list('refs/heads'), list('objects')]);
  return head === 'ref: refs/heads/main\n' && /^\s*\[core\]/m.test(config ?? '') && packs?.length === 0 && heads?.length === 0
    && objects !== undefined && objects.every((o) => o === 'info' || o === 'pack');
}

/**
 * Copies the folders and files of `from` to `to` (no file of it may exist there), with the folders made at
 * once and the files copied at once: `fs.promises.cp` walks one entry after the other and took
 * 5–7 ms for the dozen entries of an empty repository, this about 1 ms (measured).
 */
async function copySkeleton(from: string, to: string): Promise<void> {
  const entries = await fsp.readdir(from, { recursive: true, withFileTypes: true });
  const rel = (e: { parentPath?: string; path?: string; name: string }) => path.relative(from, path.join(e.parentPath ?? e.path ?? from, e.name));
  const dirs = entries.filter((e) => e.isDirectory()).map(rel);
  const leaves = dirs.filter((d) => !dirs.some((o) => o.startsWith(d + path.sep)));
  await fsp.mkdir(to, { recursive: true });
  await Promise.all(leaves.map((d) => fsp.mkdir(path.join(to, d), { recursive: true })));
  await Promise.all(entries.filter((e) => e.isFile()).map((e) => fsp.copyFile(path.join(from, rel(e)), path.join(to, rel(e)), fs.constants.COPYFILE_EXCL)));
}

/**
 * Copies a freshly initialised `.git` to `template` (through a temporary folder renamed into
 * place) when both are on the same device; another preparation that got there first wins.
 * Failures are logged, never thrown: the template only saves time.
 */
async function keepTemplate(gitDir: string, template: string): Promise<void> {
  const tmp = `${template}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await fsp.mkdir(path.dirname(template), { recursive: true });
    const [a, b] = await Promise.all([fsp.stat(gitDir), fsp.stat(path.dirname(template))]);
    if (a.dev !== b.dev) return;
    await copySkeleton(gitDir, tmp);
    await fsp.rename(tmp, template).catch(async (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST' && e.code !== 'ENOTEMPTY') throw e;
    });
  } catch (e) {
    logger.debug(`no init template kept at ${template}: ${(e as Error).message}`);
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
}
