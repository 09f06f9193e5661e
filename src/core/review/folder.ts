import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The review store's folder (docs/review.md): `configured` when set (a leading `~/` is the home
 * folder; a relative path is taken from `base`), else `<base>/.expbench-review` when there is a
 * base (the first workspace folder, or the CLI's working folder), else `~/.expbench/review`.
 */
export function reviewFolder(configured: string | undefined, base: string | undefined): string {
  const c = configured?.trim();
  if (c) {
    const home = c === '~' || c.startsWith('~/') ? path.join(os.homedir(), c.slice(1)) : c;
    return path.resolve(base ?? os.homedir(), home);
  }
  return base ? path.join(base, '.expbench-review') : path.join(os.homedir(), '.expbench', 'review');
}
