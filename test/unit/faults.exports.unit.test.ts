/**
 * Faults of the commands that write a folder or a file of their own for others to read (issue 33,
 * the fault round's findings): `curate export`, `session export`, `session import`, run through
 * the bundled CLI (`dist/cli.js`, `npm run build` first) onto an output that already exists and
 * onto a small tmpfs that fills. After each case: no raw stack, the message names the output and
 * says what to do, no temp file or half-made folder is left, and the same command run again once
 * there is room succeeds (it never refuses its own leftovers as "not empty").
 * The full-disk cases mount their own tmpfs (root), as test/unit/faults.sessions does.
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { crashOf, listTree, printFiguresAtEnd, record, runCli, settle, unclearOf, type CliResult } from '../harness/faults';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = process.env.EXPBENCH_FAULTS_CLI ?? path.join(ROOT, 'dist', 'cli.js');
const TASK = 'sample/toycal/0';
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_JUDGE_|EXPBENCH_AGENT_|EXPBENCH_DATASETS$)/.test(k)));
const LIMIT_MS = Number(process.env.EXPBENCH_FAULTS_LIMIT_MS ?? 60_000);

/** Entries of `dir` that a writer left behind: temp files and siblings of any naming this project or Node uses. */
function strays(dir: string, keep: string[] = []): string[] {
  return fs.readdirSync(dir).filter((n) => !keep.includes(n) && /(\.tmp$|\.tmp-|\.\d+\.tmp$|^\.[^.].*\.(export|import)-|-partial)/.test(n));
}

describe('faults: export and import outputs (existing files, full disks; dist/cli.js)', function () {
  this.timeout(300_000);
  printFiguresAtEnd();
  let base: string;
  let cache: string;
  let session: string;
  let answers: string;
  const cli = (args: string[], o: { env?: NodeJS.ProcessEnv } = {}) => runCli(CLI, args, { env: { ...ENV, ...o.env }, limitMs: LIMIT_MS, cwd: ROOT });

  before(async function () {
    this.timeout(120_000);
    if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-faults-exports-'));
    cache = path.join(base, 'cache');
    session = path.join(base, 'session');
    answers = path.join(base, 'answers.json');
    fs.writeFileSync(answers, JSON.stringify({ design: ['Independent: temperature (values: 1, 2)'], conclusion: 'ECE drops from 0.12 to 0.03.' }));
    const p = await cli(['prepare', TASK, '--out', session, '--cache', cache]);
    assert.equal(p.code, 0, p.stderr);
    // A large generated table: the patch (and so the export) is larger than the free space left.
    fs.writeFileSync(path.join(session, 'workspace', 'table.txt'), Array.from({ length: 20_000 }, (_, i) => `row ${i} of a generated table of results\n`).join(''));
    fs.writeFileSync(path.join(session, 'workspace', 'reproduce_exp_bench.sh'), '#!/bin/bash\necho "ECE 0.03"\n', { mode: 0o755 });
    const s = await cli(['session', 'submit', session, '--answers', answers, '--no-verify', '--no-judge']);
    assert.equal(s.code, 0, s.stderr);
  });
  after(() => { if (base) fs.rmSync(base, { recursive: true, force: true }); });

  it('curate export --out an existing file: refused at once, naming it; the file is unchanged', async () => {
    try {
      const file = path.join(base, 'already-here.txt');
      fs.writeFileSync(file, 'someone\'s notes\n');
      const r = await cli(['curate', 'export', '--out', file, '--review', path.join(base, 'review')]);
      record('curate export --out FILE', {
        lost: fs.readFileSync(file, 'utf8') === 'someone\'s notes\n' ? [] : [file], crash: crashOf(r),
        unclear: r.code === 0 ? 'accepted' : unclearOf(r, [file]), leftovers: strays(base),
      }, true);
    } finally { settle(); }
  });

  it('session import killed (kill -9) after its preparation: the rerun into the same --out clears the half-made session and imports', async () => {
    try {
      const runs = path.join(base, 'runs-kill');
      fs.mkdirSync(runs, { recursive: true });
      const stem = path.join(runs, '424242_task_index_0_iter_1_duration_0.5_eval_');
      fs.writeFileSync(`${stem}gen.json`, JSON.stringify({ design: 'Independent: temperature.', conclusion: 'ECE drops to 0.03.' }));
      fs.writeFileSync(`${stem}gen.patch`, 'diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+a note\n');
      const out = path.join(base, 'killed-import');
      const args = ['session', 'import', `${stem}gen.json`, `${stem}gen.patch`, '--task', TASK, '--out', out, '--cache', cache, '--no-verify', '--no-judge'];
      const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: ENV, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      const closed = new Promise((r) => child.once('close', r));
      await new Promise<void>((resolve) => {
        child.stderr!.on('data', (d: Buffer) => {
          err += d.toString();
          // the preparation is done and the import is writing its own files: killed as a crash would
          if (/^patch: /m.test(err)) { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } resolve(); }
        });
        child.once('close', () => resolve());
      });
      await closed;
      const half = fs.existsSync(out) ? fs.readdirSync(out) : [];
      const r = await cli(args);
      record('session import killed after preparing → rerun', {
        lost: [], crash: crashOf(r), leftovers: strays(base),
        unclear: half.length === 0 ? `the kill left nothing to clear (${err.slice(-200)})` : r.code !== 0 ? `the rerun failed: ${r.stderr.slice(-400)}`
          : !/removing the half-made import/.test(r.stderr) ? 'the rerun did not say it cleared the half-made import' : undefined,
      }, true);
      assert.ok(fs.existsSync(path.join(out, 'workspace', 'notes.txt')), 'the rerun applied the patch');
    } finally { settle(); }
  });

  describe('a full disk (tmpfs of 2 MiB)', () => {
    let mnt: string | undefined;
    let n = 0;
    before(function () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-faults-exports-tmpfs-'));
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir], { stdio: 'pipe' });
        mnt = dir;
      } catch (e) {
        fs.rmdirSync(dir);
        process.stdout.write(`      (SKIPPED: cannot mount a tmpfs (${String((e as { stderr?: Buffer }).stderr ?? e).trim().split('\n')[0]}): the full-disk cases need root)\n`);
        this.skip();
      }
    });
    after(() => {
      if (!mnt) return;
      try { execFileSync('umount', ['-l', mnt]); fs.rmdirSync(mnt); } catch { /* left for the OS */ }
    });

    /** A new folder on the tmpfs for one case (its strays are that case's). */
    const caseDir = () => { const d = path.join(mnt!, `case-${++n}`); fs.mkdirSync(d); return d; };

    /** Fills the tmpfs leaving about `freeBytes`; returns a function that frees it again. */
    function fill(freeBytes: number): () => void {
      const filler = path.join(mnt!, `.filler-${++n}`);
      const fd = fs.openSync(filler, 'w');
      const chunk = Buffer.alloc(64 * 1024, 1);
      try { for (;;) fs.writeSync(fd, chunk); } catch { /* ENOSPC */ }
      fs.ftruncateSync(fd, Math.max(0, fs.fstatSync(fd).size - freeBytes));
      fs.closeSync(fd);
      return () => fs.rmSync(filler, { force: true });
    }

    /** One full-disk case: the first run fails clearly and leaves nothing; the rerun with room succeeds. */
    async function fullDiskCase(name: string, out: string, run: () => Promise<CliResult>, freeBytes: number, check: () => string | undefined): Promise<void> {
      const free = fill(freeBytes);
      const r = await run();
      const leftAfterFailure = fs.existsSync(out) ? listTree(out).slice(0, 5).map((p) => `${path.basename(out)}/${p}`) : [];
      const stray = strays(path.dirname(out)).map((s) => path.join(path.dirname(out), s));
      free();
      const again = await run();
      const unclear = r.code === 0 ? 'the first run succeeded on a full disk (the case did not fill it)'
        : !/disk is full/.test(r.stderr) ? `does not say the disk is full: ${r.stderr.slice(0, 300)}`
          : unclearOf(r, [out, path.dirname(out)]) ?? (again.code !== 0 ? `the rerun with room failed (exit ${again.code}): ${again.stderr.slice(-500)}` : check());
      record(name, { lost: [], crash: crashOf(r) ?? crashOf(again), unclear, leftovers: [...stray, ...leftAfterFailure.map((p) => `${p} (half-made)`)] }, true);
      // The case's outputs go, so that the room the next case measures is the tmpfs's, not what this one left.
      fs.rmSync(path.dirname(out), { recursive: true, force: true });
    }

    it('session export (inspect-json and inspect-eval) onto a full disk: "disk is full", no stack, no temp file; the rerun writes it', async () => {
      try {
        for (const format of ['inspect-json', 'inspect-eval']) {
          const out = path.join(caseDir(), `log.${format === 'inspect-eval' ? 'eval' : 'json'}`);
          await fullDiskCase(`full disk: session export --format ${format}`, out,
            () => cli(['session', 'export', session, '--format', format, '--out', out]), 0,
            () => (fs.statSync(out).size > 0 ? undefined : 'the rerun wrote an empty log'));
        }
      } finally { settle(); }
    });

    it('curate export onto a full disk: no half-made folder; the rerun into the same --out succeeds', async () => {
      try {
        // A dataset whose export needs more room than is left: the sample's task file copied with a long method text.
        const ds = path.join(base, 'ds');
        const sample = path.join(ROOT, 'samples', 'exp-bench');
        fs.cpSync(sample, ds, { recursive: true });
        const file = listTree(ds).find((p) => p.endsWith('_complete_final.json') || (p.endsWith('.json') && !p.endsWith('.jsonl')))!;
        const abs = path.join(ds, file);
        const json = JSON.parse(fs.readFileSync(abs, 'utf8'));
        json.questions[0].method = `${json.questions[0].method}\n${'A long description of the method. '.repeat(12_000)}`;
        fs.writeFileSync(abs, JSON.stringify(json));
        const out = path.join(caseDir(), 'curated');
        await fullDiskCase('full disk: curate export', out,
          () => cli(['curate', 'export', ds, '--no-sample', '--out', out, '--review', path.join(base, 'review')]), 64 * 1024,
          () => (fs.existsSync(path.join(out, 'SHA256SUMS')) ? undefined : 'the rerun left no SHA256SUMS'));
      } finally { settle(); }
    });

    it('session import onto a full disk: no half-made session; the rerun into the same --out succeeds', async () => {
      try {
        // A harness record of the sample's paper whose patch is larger than the room left after preparing.
        const runs = path.join(base, 'runs');
        fs.mkdirSync(runs, { recursive: true });
        const stem = path.join(runs, '424242_task_index_0_iter_1_duration_0.5_eval_');
        fs.writeFileSync(`${stem}gen.json`, JSON.stringify({ design: 'Independent: temperature.', conclusion: 'ECE drops to 0.03.' }));
        const rows = Array.from({ length: 5_000 }, (_, i) => `+row ${i} of a generated table of results`);
        fs.writeFileSync(`${stem}gen.patch`, `diff --git a/table.txt b/table.txt\nnew file mode 100644\n--- /dev/null\n+++ b/table.txt\n@@ -0,0 +1,${rows.length} @@\n${rows.join('\n')}\n`);
        const files = [`${stem}gen.json`, `${stem}gen.patch`];
        // Room for the preparation (measured on the same file system), not for the import's copies of the patch.
        const probe = path.join(mnt!, 'probe');
        const p = await cli(['prepare', TASK, '--out', probe, '--cache', cache]);
        assert.equal(p.code, 0, p.stderr);
        const prepared = Number(execFileSync('du', ['-sb', probe]).toString().split('\t')[0]);
        fs.rmSync(probe, { recursive: true, force: true });
        const out = path.join(caseDir(), 'imported');
        await fullDiskCase('full disk: session import', out,
          () => cli(['session', 'import', ...files, '--task', TASK, '--out', out, '--cache', cache, '--no-verify', '--no-judge']), prepared + 96 * 1024,
          () => (fs.existsSync(path.join(out, 'private', 'import', 'record.json')) ? undefined : 'the rerun left no import record'));
      } finally { settle(); }
    });
  });
});
