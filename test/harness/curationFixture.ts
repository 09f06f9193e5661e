/**
 * The curation tests' one fixture: a paper's git repository built commit by commit, and a dataset
 * folder with a paper's task file and its curation file (docs/curation.md). Used by the unit tests
 * curation.pin, curation.feasibility and curation.validate, the VS Code tier's curation test and
 * the ground-truth e2e test. Real git, a fixed author, branch `main`.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { git } from '../../src/core/git';

/** A git repository the test builds: `commit(files)` writes (a `null` body deletes), commits all and returns the full SHA. */
export interface PaperRepo {
  dir: string;
  commit(files: Record<string, string | null>, message?: string): Promise<string>;
}

/** `git init -b main` in `dir` (created; `from`, a folder, copied in first). */
export async function paperRepo(dir: string, from?: string): Promise<PaperRepo> {
  await fsp.mkdir(dir, { recursive: true });
  if (from) await fsp.cp(from, dir, { recursive: true });
  await git(['init', '-q', '-b', 'main'], { repo: 'none', cwd: dir });
  const repo = { checkout: dir };
  let n = 0;
  return {
    dir,
    async commit(files, message) {
      for (const [f, body] of Object.entries(files)) {
        const p = path.join(dir, f);
        if (body === null) await fsp.rm(p, { force: true });
        else {
          await fsp.mkdir(path.dirname(p), { recursive: true });
          await fsp.writeFile(p, body);
        }
      }
      await git(['add', '-A'], { repo });
      await git(['-c', 'user.name=t', '-c', 'user.email=t@localhost', 'commit', '-q', '--allow-empty', '-m', message ?? `commit ${++n}`], { repo });
      return (await git(['rev-parse', 'HEAD'], { repo })).text.trim();
    },
  };
}

/**
 * Writes `<ds>/tasks/<conference>/<paperId>/<paperId>_complete_final.json` with `questions` (or
 * `taskFile`, a file to copy), and `curation.jsonc` beside it when `curation` is given (text as
 * written, or an object written as JSON). @returns the paper's folder
 */
export async function writePaper(ds: string, paper: string, o: { questions?: unknown[]; taskFile?: string; curation?: string | object }): Promise<string> {
  const [conference, paperId] = paper.split('/');
  const d = path.join(ds, 'tasks', conference, paperId);
  await fsp.mkdir(d, { recursive: true });
  const file = path.join(d, `${paperId}_complete_final.json`);
  if (o.taskFile) await fsp.copyFile(o.taskFile, file);
  else await fsp.writeFile(file, JSON.stringify({ questions: o.questions ?? [] }, null, 2));
  if (o.curation !== undefined) await fsp.writeFile(path.join(d, 'curation.jsonc'), typeof o.curation === 'string' ? o.curation : JSON.stringify(o.curation, null, 2));
  return d;
}
