import * as path from 'node:path';
import { promises as fsp } from 'node:fs';
import { ExpBenchError } from '../errors';
import { writeAtomic } from '../util/fs';
import { tableCsv } from './csv';
import { reportHtml } from './html';
import type { Figure, FigureSet } from './model';
import { figureSvg } from './svg';
import { vegaLiteSpec } from './vegaLite';

/**
 * The run keys of a figure set as an export writes them: relative to `base` when under it, else
 * absolute (so an exported folder that sits beside its inputs stays readable elsewhere).
 */
export function runKeyWriter(base: string): (run: string) => string {
  const root = path.resolve(base);
  return (run) => {
    const rel = path.relative(root, run);
    return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : run;
  };
}

/** A figure with its run keys rewritten by `key`. */
function withKeys(f: Figure, key: (r: string) => string): Figure {
  switch (f.type) {
    case 'bars': return { ...f, data: f.data.map((d) => ({ ...d, runs: d.runs.map(key), hits: d.hits.map(key) })) };
    case 'stack': return { ...f, data: f.data.map((d) => ({ ...d, runs: d.runs.map(key), unconfined: d.unconfined.map(key) })) };
    case 'heat': return { ...f, data: f.data.map((d) => ({ ...d, runs: d.runs.map(key), hits: d.hits.map(key) })) };
  }
}

/**
 * Writes `OUT/table.csv`, `OUT/<figure>.svg`, `OUT/<figure>.vl.json` (Vega-Lite, data inline) for
 * each figure, and `OUT/report.html`, each file atomically. `OUT` is created when missing; a
 * file that is in the way as a folder, or an `OUT` that is a file, is refused naming it.
 *
 * @param opts.keysRelativeTo run keys are written relative to this folder when under it (default: the current folder)
 * @returns the files written, absolute, in order
 */
export async function writeFigures(out: string, set: FigureSet, opts: { inputs?: string[]; keysRelativeTo?: string } = {}): Promise<string[]> {
  const dir = path.resolve(out);
  const st = await fsp.stat(dir).catch(() => undefined);
  if (st && !st.isDirectory()) throw new ExpBenchError('BAD_INPUT', out, 'is a file, not a folder for the figures');
  await fsp.mkdir(dir, { recursive: true });
  const key = runKeyWriter(opts.keysRelativeTo ?? process.cwd());
  const figures = set.figures.map((f) => withKeys(f, key));
  const keyed: FigureSet = { ...set, figures };
  const files: [string, string][] = [['table.csv', tableCsv(set, key)]];
  for (const f of figures) {
    files.push([`${f.id}.svg`, figureSvg(f)], [`${f.id}.vl.json`, `${JSON.stringify(vegaLiteSpec(f), null, 2)}\n`]);
  }
  const unconfined = set.unconfined.length ? `Unconfined (an outside agent kept its own shell on the host): ${set.unconfined.map(key).join(', ')}.` : undefined;
  files.push(['report.html', reportHtml(keyed, { inputs: opts.inputs ?? [], ...(unconfined ? { unconfinedNote: unconfined } : {}) })]);
  const written: string[] = [];
  for (const [name, body] of files) {
    const file = path.join(dir, name);
    const there = await fsp.lstat(file).catch(() => undefined);
    if (there && !there.isFile()) throw new ExpBenchError('BAD_INPUT', file, 'is in the way (not a regular file): move it or choose another folder');
    await writeAtomic(file, body);
    written.push(file);
  }
  return written;
}
