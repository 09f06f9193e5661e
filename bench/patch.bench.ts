/**
 * Benchmark: `makePatch` (src/core/workspace/patch.ts) against plain git on a large change, in the
 * same run, interleaved. Workspace: a session prepared from the generated repository of
 * prepare.bench.ts (FILES files), then changed: MODIFIED files with 10 lines rewritten each,
 * ADDED new files (40 lines each, in new folders), DELETED files, RENAMED files (moved unchanged),
 * 20 binary files added. Target (issue 3): makePatch ≤ 1.2× `git diff`.
 *
 * Baselines, each on a fresh copy of the workspace's index (the user's index is never touched):
 * - `git diff` (the target's baseline): what the reference harness records, untracked files
 *   intent-added (`git add -N`) then `git diff --find-renames <task start>`;
 * - `git diff` alone: the diff process only, on an index where the new files are already
 *   intent-added (a lower bound: the untracked-file scan is left out).
 * Prints medians of RUNS runs in ms and the ratios.
 */
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { makePatch } from '../src/core/workspace/patch';
import { prepareSession } from '../src/core/workspace/prepare';
import { tmpDir } from '../test/fixtures/repos/build';
import { generateRepo } from './prepare.bench';

const exec = promisify(execFile);
const FILES = Number(process.env.BENCH_FILES ?? 3000);
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const MODIFIED = Math.floor(FILES / 2);
const ADDED = Math.floor(FILES / 3);
const DELETED = Math.floor(FILES / 10);
const RENAMED = Math.floor(FILES / 30);

const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' };
const DIFF_ARGS = ['-c', 'core.quotePath=false', 'diff', '--no-color', '--no-ext-diff', '--no-textconv', '--find-renames'];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The large change: modified, added, deleted, renamed and binary files (see the header). */
async function change(ws: string): Promise<void> {
  const file = (i: number) => path.join(ws, `pkg${i % 60}`, `mod_${i}.py`);
  for (let i = 0; i < MODIFIED; i++) {
    const lines = (await fsp.readFile(file(i), 'utf8')).split('\n');
    for (let l = 1; l < lines.length; l += 8) lines[l] = `${lines[l]}  # changed ${i}`;
    await fsp.writeFile(file(i), lines.join('\n'));
  }
  for (let i = 0; i < ADDED; i++) {
    const dir = path.join(ws, `new${i % 40}`);
    await fsp.mkdir(dir, { recursive: true });
    const body = Array.from({ length: 40 }, (_, l) => `value_${i}_${l} = ${(i * 31 + l * 17) % 997}`).join('\n') + '\n';
    await fsp.writeFile(path.join(dir, `added_${i}.py`), body);
  }
  for (let i = MODIFIED; i < MODIFIED + DELETED; i++) await fsp.rm(file(i));
  await fsp.mkdir(path.join(ws, 'moved'), { recursive: true });
  for (let i = MODIFIED + DELETED; i < MODIFIED + DELETED + RENAMED; i++) await fsp.rename(file(i), path.join(ws, 'moved', `mod_${i}.py`));
  for (let i = 0; i < 20; i++) {
    const bytes = Buffer.alloc(4096);
    for (let b = 0; b < bytes.length; b++) bytes[b] = (b * 131 + i * 7) & 0xff;
    await fsp.writeFile(path.join(ws, 'new0', `blob_${i}.bin`), bytes);
  }
}

export async function run(): Promise<Record<string, number>> {
  const root = await tmpDir('expbench-bench-patch-');
  try {
    const src = path.join(root, 'src');
    await generateRepo(src, FILES, 2);
    const out = path.join(root, 'session');
    const task = { id: 'bench/1/0', type: 1 as const, source: [], maskedSource: [] };
    const m = await prepareSession({ task, source: src, outDir: out, cacheDir: path.join(root, 'cache') });
    const ws = path.join(out, 'workspace');
    await change(ws);
    const base = m.workspaceCommit;
    const gitDir = path.join(ws, '.git');

    // Index with the untracked files already intent-added, for the "git diff alone" baseline.
    const readyIndex = path.join(root, 'ready.index');
    await fsp.copyFile(path.join(gitDir, 'index'), readyIndex);
    await exec('git', ['add', '--intent-to-add', '--all'], { cwd: ws, env: { ...GIT_ENV, GIT_INDEX_FILE: readyIndex } });

    let n = 0;
    const freshIndex = async (from: string) => {
      const idx = path.join(root, `i-${n++}.index`);
      await fsp.copyFile(from, idx);
      return idx;
    };
    const harness = async () => {
      const idx = await freshIndex(path.join(gitDir, 'index'));
      const env = { ...GIT_ENV, GIT_INDEX_FILE: idx };
      const t0 = performance.now();
      await exec('git', ['add', '--intent-to-add', '--all'], { cwd: ws, env });
      const r = await exec('git', [...DIFF_ARGS, base, '--'], { cwd: ws, env, maxBuffer: 1 << 30 });
      const ms = performance.now() - t0;
      await fsp.rm(idx);
      return { ms, bytes: r.stdout.length };
    };
    const diffOnly = async () => {
      const idx = await freshIndex(readyIndex);
      const t0 = performance.now();
      await exec('git', [...DIFF_ARGS, base, '--'], { cwd: ws, env: { ...GIT_ENV, GIT_INDEX_FILE: idx }, maxBuffer: 1 << 30 });
      const ms = performance.now() - t0;
      await fsp.rm(idx);
      return ms;
    };
    const ours = async () => {
      const t0 = performance.now();
      const p = await makePatch(ws);
      return { ms: performance.now() - t0, p };
    };

    for (let i = 0; i < 2; i++) { await harness(); await diffOnly(); await ours(); }
    const th: number[] = []; const td: number[] = []; const to: number[] = [];
    let last = await ours();
    let diffBytes = 0;
    for (let i = 0; i < RUNS; i++) {
      const h = await harness();
      th.push(h.ms);
      diffBytes = h.bytes;
      td.push(await diffOnly());
      last = await ours();
      to.push(last.ms);
    }
    const harnessMs = median(th); const diffMs = median(td); const oursMs = median(to);
    const files = last.p.files.length;
    const count = (s: string) => last.p.files.filter((f) => f.status === s).length;
    const lines = last.p.files.reduce((a, f) => a + f.additions + f.deletions, 0);
    console.log(`patch: ${FILES}-file workspace; change: ${files} files (${count('modified')} modified, ${count('added')} added, ` +
      `${count('deleted')} deleted, ${count('renamed')} renamed; ${last.p.binaryFiles.length} binary), ${lines} lines, ` +
      `diff ${(diffBytes / 1048576).toFixed(1)} MiB; medians of ${RUNS}`);
    console.log(`patch: git add -N + git diff ${harnessMs.toFixed(0)} ms; git diff alone ${diffMs.toFixed(0)} ms; makePatch ${oursMs.toFixed(0)} ms, ` +
      `ratio ${(oursMs / harnessMs).toFixed(2)}× (target ≤ 1.2×), ${(oursMs / diffMs).toFixed(2)}× git diff alone`);
    return { files, lines, diffBytes, harnessMs, diffMs, oursMs, ratio: oursMs / harnessMs, ratioDiffOnly: oursMs / diffMs };
  } finally {
    await fsp.rm(root, { recursive: true, force: true });
  }
}

if (require.main === module) void run();
