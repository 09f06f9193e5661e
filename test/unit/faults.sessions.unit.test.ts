/**
 * Fault injection against the session writers of the command line (issue 12, groups 1, 2, 3, 7's
 * session files, 9's temp files): the bundled CLI `dist/cli.js` (run `npm run build` first) is
 * killed at seeded random moments, runs on a 2 MiB tmpfs that fills, runs on corrupted session
 * files and runs twice at once. After each case: every byte of the work from before the fault is
 * still there, the next command says what happened and what to do (no raw stack, no hang), and no
 * temp file is left. The figures line is printed at the end (test/harness/faults.ts).
 *
 * `EXPBENCH_FAULTS_SEED` changes the kill moments (default 12); `EXPBENCH_FAULTS_CLI` another CLI file;
 * `EXPBENCH_FAULTS_LIMIT_MS` the time after which a command has hung (default 15000).
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SessionLayout } from '../../src/core/layout';
import { readEvents, EventLog } from '../../src/core/session/events';
import { Session } from '../../src/core/session/session';
import { SessionStore } from '../../src/core/session/store';
import { requireDocker } from '../harness/docker';
import {
  bytesOf, crashOf, isLeftover, leftovers, missingWork, printFiguresAtEnd, record, runCli, seeded, settle, snapshot, unclearOf, type CliResult, type Observation,
} from '../harness/faults';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = process.env.EXPBENCH_FAULTS_CLI ?? path.join(ROOT, 'dist', 'cli.js');
/** The compiled durable writer, run in a child that is killed mid-write. */
const FS_MODULE = path.join(ROOT, 'out', 'src', 'core', 'util', 'fs.js');
const SEED = Number(process.env.EXPBENCH_FAULTS_SEED ?? 12);
const TASK = 'sample/toycal/0';
/** No judge endpoint: the heuristic judge runs offline. */
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_JUDGE_)/.test(k)));
/** A command still running after this long has hung. */
const LIMIT_MS = Number(process.env.EXPBENCH_FAULTS_LIMIT_MS ?? 15_000);
const KILLS = 8;

/**
 * Entries of a session folder that are no one's work: the owner token (rewritten by every opener),
 * temp files, the host repository (its index is the host's stat cache of the workspace, its
 * objects only grow; what the solver wrote is the workspace, checked file by file), the submit lock.
 */
const notWork = (rel: string) => rel !== 'private/owner.json' && rel !== 'private/submit.lock' && rel !== 'private/repo.git' && !rel.startsWith('private/repo.git/') && !isLeftover(rel);
/** What a successful submit legitimately rewrites. */
const SUBMIT_WRITES = ['private/state.json', 'private/answers.json', 'private/design.json', 'private/harness', 'private/harness/answers.json',
  'private/harness/patch.diff', 'private/harness/reproduce_exp_bench.sh'];

describe('faults: session folders under kills, full disks, corrupted files and concurrency (dist/cli.js)', function () {
  this.timeout(120_000);
  printFiguresAtEnd();
  let base: string;
  let template: string;
  let cache: string;
  let answers: string;
  /** When an uninterrupted run starts writing into the session folder, and when it ends (ms after its start). */
  let prepareWindow = { from: 0, to: 400 };
  let submitWindow = { from: 0, to: 400 };
  let n = 0;
  const fresh = (tag: string) => path.join(base, `${tag}-${++n}`);
  const copyTemplate = (tag: string) => { const d = fresh(tag); execFileSync('cp', ['-a', template, d]); return d; };
  const cli = (args: string[], o: { killAfterMs?: number; limitMs?: number } = {}) => runCli(CLI, args, { env: ENV, limitMs: LIMIT_MS, cwd: ROOT, ...o });
  const prepare = (dir: string, o: { killAfterMs?: number } = {}) => cli(['prepare', TASK, '--out', dir, '--cache', cache], o);
  const submit = (dir: string, o: { killAfterMs?: number } = {}) => cli(['session', 'submit', dir, '--answers', answers, '--no-verify', '--no-judge'], o);

  before(async function () {
    this.timeout(60_000);
    if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-faults-sessions-'));
    cache = path.join(base, 'cache');
    answers = path.join(base, 'answers.json');
    fs.writeFileSync(answers, JSON.stringify({ design: ['Constant: dataset — the toy data', 'Independent: temperature (values: 1, 2)'], conclusion: 'ECE drops from 0.12 to 0.03.' }));
    template = path.join(base, 'template');
    const r = await prepare(template);
    assert.equal(r.code, 0, r.stderr);
    const measureDir = path.join(base, 'measure');
    const t0 = Date.now();
    const seen = firstSeen(measureDir);
    const again = await prepare(measureDir);
    assert.equal(again.code, 0, again.stderr);
    prepareWindow = { from: (await seen) - t0, to: Date.now() - t0 };
    // The user's work: workspace edits, a script, drafts, notes (state.json, events.jsonl).
    const l = new SessionLayout(template);
    fs.writeFileSync(l.script, '#!/bin/bash\npython3 -c "print(0.03)"\n', { mode: 0o755 });
    fs.appendFileSync(path.join(l.workspace, 'toycal', 'data.py'), '\n# tuned by hand\nSEED = 7\n');
    fs.mkdirSync(path.join(l.workspace, 'results'));
    fs.writeFileSync(path.join(l.workspace, 'results', 'ece.txt'), 'T=1 0.12\nT=2 0.03\n');
    const s = await Session.open(l, { client: 'test', draftQuietMs: 0 });
    await s.addNote('the loader shuffles twice');
    s.setDesign({ constants: [{ name: 'dataset', description: 'toy' }], independent: [], dependent: [], freeText: 'hours of thought' });
    s.setConclusion('draft conclusion');
    await s.close();
    const m = fresh('measure-submit');
    execFileSync('cp', ['-a', template, m]);
    const t1 = Date.now();
    const written = firstSeen(path.join(m, 'private', 'answers.json'));
    const sr = await submit(m);
    assert.equal(sr.code, 0, sr.stderr);
    submitWindow = { from: (await written) - t1, to: Date.now() - t1 };
    process.stdout.write(`      (seed ${SEED}; uninterrupted prepare writes from ${prepareWindow.from} to ${prepareWindow.to} ms, submit from ${submitWindow.from} to ${submitWindow.to} ms)\n`);
  });

  after(() => { if (base) fs.rmSync(base, { recursive: true, force: true }); });

  /** Runs `args` once on `dir` and classifies what it left (see test/harness/faults.ts). */
  async function observe(name: string, dir: string, args: string[], o: {
    names: string[]; expect?: 'refuse' | 'ok' | 'any'; mayChange?: string[]; appendOnly?: string[]; mustHold?: boolean;
    forbid?: RegExp; extra?: (r: CliResult) => string | undefined;
  }): Promise<CliResult> {
    const before = snapshot(dir, notWork);
    const appendOnly = o.appendOnly ?? ['private/events.jsonl'];
    const bytes = bytesOf(dir, appendOnly);
    const notes = notesOf(dir);
    const r = await cli(args);
    const lost = missingWork(before, dir, bytes, { appendOnly, mayChange: r.code === 0 ? o.mayChange : [] });
    const after = notesOf(dir);
    if (notes && after && !notes.every((x) => after.includes(x))) lost.push('private/state.json (notes gone)');
    let unclear = unclearOf(r, o.names);
    if (o.expect === 'refuse' && r.code === 0) unclear = `accepted: ${r.stdout.slice(0, 120)}`;
    if (o.expect === 'ok' && r.code !== 0) unclear = `failed: ${r.stderr.slice(0, 300)}`;
    if (!unclear && o.forbid?.test(r.stderr)) unclear = `advises what would destroy work: ${r.stderr.slice(0, 300)}`;
    unclear ??= o.extra?.(r);
    const obs: Observation = { lost, crash: crashOf(r), unclear, leftovers: leftovers(dir) };
    record(name, obs, o.mustHold);
    return r;
  }

  describe('group 1: a folder with work is never deleted by prepare; half-prepared folders are refused', () => {
    const manifests: Array<[string, (taskId: string) => string]> = [
      ['the draft of a preparation killed after "task start"', (id) => JSON.stringify({ complete: false, taskId: id, source: { kind: 'clone', location: '/x' }, createdAt: new Date().toISOString() })],
      ['{}', () => '{}'], ['[]', () => '[]'], ['1', () => '1'], ['{"complete":"true"}', () => '{"complete":"true"}'],
    ];
    for (const [what, content] of manifests) {
      cases(`manifest ${what}: prepare, submit, verify and judge refuse, every byte kept, no advice that destroys work`, async () => {
        const dir = copyTemplate('half');
        const l = new SessionLayout(dir);
        fs.writeFileSync(l.manifest, content(TASK));
        const names = [dir, l.manifest];
        const forbid = /prepare the session again/;
        await observe(`half(${what}): prepare`, dir, ['prepare', TASK, '--out', dir, '--cache', cache], { names, expect: 'refuse', mustHold: true });
        await observe(`half(${what}): session submit`, dir, ['session', 'submit', dir, '--answers', answers, '--no-verify', '--no-judge'], { names, expect: 'refuse', forbid, mustHold: true });
        await observe(`half(${what}): verify`, dir, ['verify', dir, '--json'], { names, expect: 'refuse', forbid, mustHold: true });
        await observe(`half(${what}): judge`, dir, ['judge', dir, '--json'], { names, expect: 'refuse', forbid, mustHold: true });
        assert.equal(fs.readFileSync(path.join(l.workspace, 'results', 'ece.txt'), 'utf8'), 'T=1 0.12\nT=2 0.03\n');
      });
    }

    cases('a folder with a complete manifest and work, or only a prepared session, is refused by prepare', async () => {
      const worked = copyTemplate('worked');
      await observe('worked: prepare', worked, ['prepare', TASK, '--out', worked, '--cache', cache], { names: [worked], expect: 'refuse', mustHold: true });
      const prepared = fresh('prepared');
      assert.equal((await prepare(prepared)).code, 0);
      await observe('prepared: prepare', prepared, ['prepare', TASK, '--out', prepared, '--cache', cache], { names: [prepared], expect: 'refuse', mustHold: true });
    });
  });

  describe('kills at seeded random moments (groups 1 and 9)', () => {
    cases(`prepare killed ${KILLS} times: the next prepare clears only the preparation's own files, or refuses clearly`, async () => {
      const rnd = seeded(SEED);
      const seen: string[] = [];
      for (let i = 0; i < KILLS; i++) {
        const dir = fresh('kill-prepare');
        const at = killMoment(rnd, prepareWindow);
        const k = await prepare(dir, { killAfterMs: at });
        const crash = k.killed ? undefined : crashOf(k);
        const r = await cli(['prepare', TASK, '--out', dir, '--cache', cache]);
        let unclear = unclearOf(r, [dir]);
        if (r.code === 0) {
          const m = JSON.parse(fs.readFileSync(new SessionLayout(dir).manifest, 'utf8'));
          if (m.complete !== true) unclear = 'prepare said ok, the manifest is not complete';
        }
        const name = `prepare killed at ${at} ms (${k.killed ? 'killed' : 'had finished'}) → next prepare exit ${r.code}`;
        seen.push(`${at}→${r.code}`);
        record(name, { lost: [], crash: crash ?? crashOf(r), unclear, leftovers: leftovers(dir) });
      }
      process.stdout.write(`      (kill ms → exit of the next prepare: ${seen.join(', ')})\n`);
    });

    cases(`session submit killed ${KILLS} times: the work is kept, the next submit finishes it or says it was submitted`, async () => {
      const rnd = seeded(SEED + 1);
      const seen: string[] = [];
      for (let i = 0; i < KILLS; i++) {
        const dir = copyTemplate('kill-submit');
        const before = snapshot(dir, notWork);
        const bytes = bytesOf(dir, ['private/events.jsonl']);
        const notes = notesOf(dir);
        const at = killMoment(rnd, submitWindow);
        const k = await submit(dir, { killAfterMs: at });
        const r = await submit(dir);
        const lost = missingWork(before, dir, bytes, { appendOnly: ['private/events.jsonl'], mayChange: SUBMIT_WRITES });
        const after = notesOf(dir);
        if (!after || !notes!.every((x) => after.includes(x))) lost.push('private/state.json (notes gone)');
        const st = JSON.parse(fs.readFileSync(new SessionLayout(dir).state, 'utf8'));
        const unclear = st.submitted ? unclearOf(r, [dir]) : `not submitted after the second submit (exit ${r.code}): ${r.stderr.slice(0, 200)}`;
        // Issue 33: a submission is recorded once, whenever the first process stopped (the second repairs a missing event).
        const submittedEvents = fs.readFileSync(new SessionLayout(dir).events, 'utf8').split('\n').filter((l) => l.includes('"type":"submitted"')).length;
        if (st.submitted && submittedEvents !== 1) lost.push(`private/events.jsonl (${submittedEvents} submitted events, one expected)`);
        seen.push(`${at}→${r.code}`);
        record(`submit killed at ${at} ms → next submit exit ${r.code}`, { lost, crash: (k.killed ? undefined : crashOf(k)) ?? crashOf(r), unclear, leftovers: leftovers(dir) });
      }
      process.stdout.write(`      (kill ms → exit of the next submit: ${seen.join(', ')})\n`);
    });

    cases('a writer killed before its rename leaves a temp file that the next command removes (group 9)', async () => {
      const dir = copyTemplate('kill-writer');
      const l = new SessionLayout(dir);
      const target = path.join(l.private, 'design.json');
      // 64 MiB written and fsynced: the temp file exists for a while before the rename.
      const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(FS_MODULE)}).writeAtomic(${JSON.stringify(target)}, Buffer.alloc(64 << 20, 97))`], { stdio: 'ignore' });
      const t0 = Date.now();
      let seen: string[] = [];
      while (Date.now() - t0 < 10_000 && (seen = leftovers(dir)).length === 0) await new Promise((r) => setTimeout(r, 2));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('close', r));
      assert.ok(seen.length > 0, 'the writer never made its temp file');
      assert.ok(leftovers(dir).length > 0, 'the killed writer left a temp file');
      await observe('writer killed mid-write → session submit', dir, ['session', 'submit', dir, '--answers', answers, '--no-verify', '--no-judge'],
        { names: [dir], expect: 'ok', mayChange: SUBMIT_WRITES, mustHold: true });
    });
  });

  describe('a full disk (2 MiB tmpfs; groups 2 and 3)', function () {
    let mnt: string | undefined;
    before(function () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-faults-tmpfs-'));
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir], { stdio: 'pipe' });
        mnt = dir;
      } catch (e) {
        fs.rmdirSync(dir);
        const reason = `cannot mount a tmpfs (${String((e as { stderr?: Buffer }).stderr ?? e).trim().split('\n')[0]}): the full-disk cases need root`;
        process.stdout.write(`      (SKIPPED: ${reason})\n`);
        this.skip();
      }
    });
    after(() => {
      if (!mnt) return;
      try { execFileSync('umount', ['-l', mnt]); fs.rmdirSync(mnt); } catch { /* left for the OS */ }
    });

    /** Fills the file system of `dir` leaving about `freeBytes` free; returns a function that frees it again. */
    function fill(dir: string, freeBytes: number): () => void {
      const filler = path.join(dir, `filler-${++n}`);
      const fd = fs.openSync(filler, 'w');
      const chunk = Buffer.alloc(64 * 1024, 1);
      try { for (;;) fs.writeSync(fd, chunk); } catch { /* ENOSPC */ }
      fs.ftruncateSync(fd, Math.max(0, fs.fstatSync(fd).size - freeBytes));
      fs.closeSync(fd);
      return () => fs.rmSync(filler, { force: true });
    }

    cases('state.json: a write the disk cannot take fails, the old file stays whole, no temp file; it lands once there is room', async () => {
      const dir = path.join(mnt!, `state-${++n}`);
      const file = path.join(dir, 'private', 'state.json');
      const store = await SessionStore.open(file, { delayMs: 10_000 });
      store.update((s) => { s.conclusion = 'the good draft'; });
      await store.flush();
      const good = fs.readFileSync(file);
      const free = fill(mnt!, 24 * 1024);
      store.update((s) => { s.conclusion = 'x'.repeat(300_000); });
      const err = await store.flush().then(() => undefined, (e: Error) => e);
      const lost = fs.readFileSync(file).equals(good) ? [] : [`state.json now ${fs.statSync(file).size} bytes, not the old ${good.length}`];
      const obs: Observation = {
        lost, crash: undefined, leftovers: leftovers(dir),
        unclear: err === undefined ? 'the write was reported saved' : /disk is full/.test(err.message) && err.message.includes(file) ? undefined : `message: ${err.message}`,
      };
      free();
      await store.flush();
      await store.close();
      assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).conclusion.length, 300_000);
      record('full disk: state.json', obs, true);
    });

    cases('session submit on a full disk: the patch is never cut; the next submit writes it whole', async () => {
      const dir = path.join(mnt!, `submit-${++n}`);
      execFileSync('cp', ['-a', template, dir]);
      const big = Array.from({ length: 12_000 }, (_, i) => `line ${i} of a long generated table of results\n`).join('');
      fs.writeFileSync(path.join(dir, 'workspace', 'results', 'table.txt'), big);
      const free = fill(mnt!, 160 * 1024);
      const r = await observe('full disk: session submit', dir, ['session', 'submit', dir, '--answers', answers, '--no-verify', '--no-judge'],
        { names: [dir], mayChange: SUBMIT_WRITES });
      const patch = path.join(dir, 'private', 'harness', 'patch.diff');
      const cut = fs.existsSync(patch) && fs.statSync(patch).size < big.length;
      free();
      const again = await submit(dir);
      const patchAfter = fs.existsSync(patch) ? fs.statSync(patch).size : 0;
      assert.ok(!cut, `the patch was cut at ${fs.statSync(patch).size} bytes while submit exited ${r.code}`);
      assert.ok(r.code !== 0 || patchAfter > big.length, 'submit said ok with the patch missing');
      if (r.code !== 0) assert.equal(again.code, 0, again.stderr);
      assert.ok(patchAfter > big.length, `patch.diff is ${patchAfter} bytes`);
      assert.deepEqual(leftovers(dir), []);
    });

    cases('events.jsonl: an append the disk cannot take fails (never reported saved); the next one starts on its own line', async () => {
      const dir = path.join(mnt!, `events-${++n}`);
      const file = path.join(dir, 'private', 'events.jsonl');
      const log = new EventLog(file);
      await log.append({ type: 'note.added', text: 'first' });
      const free = fill(mnt!, 16 * 1024);
      const err = await log.append({ type: 'note.added', text: 'y'.repeat(200_000) }).then(() => undefined, (e: Error) => e);
      free();
      await log.append({ type: 'note.added', text: 'third' });
      const back = await readEvents(file);
      const texts = back.events.map((e) => (e as { text?: string }).text);
      const lost = ['first', 'third'].filter((t) => !texts.includes(t)).map((t) => `event "${t}"`);
      if (err === undefined && !texts.some((t) => t?.length === 200_000)) lost.push('the cut event was reported saved');
      record('full disk: events.jsonl append', { lost, crash: undefined, leftovers: [], unclear: err && !err.message.includes(file) ? err.message : undefined }, true);
    });

    cases('prepare onto a full disk says so, and the next prepare (with room) succeeds', async () => {
      const dir = path.join(mnt!, `prepare-${++n}`);
      const free = fill(mnt!, 4 * 1024);
      const r = await cli(['prepare', TASK, '--out', dir, '--cache', cache]);
      free();
      const again = await cli(['prepare', TASK, '--out', dir, '--cache', cache]);
      record('full disk: prepare', { lost: [], crash: crashOf(r) ?? crashOf(again), unclear: unclearOf(r, [mnt!]) ?? unclearOf(again, [dir]), leftovers: leftovers(dir) });
      assert.equal(again.code, 0, again.stderr);
    });
  });

  describe('corrupted session files (group 7)', () => {
    const files = ['state.json', 'events.jsonl', 'owner.json', 'manifest.json', 'answers.json'];
    const ways: Array<[string, (file: string) => void]> = [
      ['{}', (f) => fs.writeFileSync(f, '{}')],
      ['[]', (f) => fs.writeFileSync(f, '[]')],
      ['1', (f) => fs.writeFileSync(f, '1')],
      ['{"complete":"true"}', (f) => fs.writeFileSync(f, '{"complete":"true"}')],
      ['truncated', (f) => { const b = fs.readFileSync(f); fs.writeFileSync(f, b.subarray(0, Math.max(1, Math.floor(b.length / 2)))); }],
      ['a directory', (f) => { fs.rmSync(f, { force: true }); fs.mkdirSync(f); fs.writeFileSync(path.join(f, 'keep.txt'), 'kept'); }],
      ['a FIFO', (f) => { fs.rmSync(f, { force: true }); execFileSync('mkfifo', [f]); }],
    ];
    for (const file of files) {
      cases(`private/${file} as ${ways.map((w) => w[0]).join(', ')}: show, prepare, submit say what is wrong; nothing is lost`, async function () {
        this.timeout(240_000);
        for (const [way, corrupt] of ways) {
          const dir = copyTemplate('corrupt');
          const f = path.join(dir, 'private', file);
          if (file === 'answers.json') fs.writeFileSync(f, JSON.stringify({ design: 'an earlier submission', conclusion: 'kept' }));
          corrupt(f);
          const names = [f, dir];
          const tag = `${file} as ${way}`;
          await observe(`${tag}: session show`, dir, ['session', 'show', dir, '--json'], { names, appendOnly: [] });
          await observe(`${tag}: prepare`, dir, ['prepare', TASK, '--out', dir, '--cache', cache], { names, expect: 'refuse', appendOnly: [] });
          if (file === 'manifest.json') {
            await observe(`${tag}: judge`, dir, ['judge', dir, '--json'], { names, expect: 'refuse', forbid: /prepare the session again/, appendOnly: [] });
          }
          const mayChange = [...SUBMIT_WRITES, ...(file === 'owner.json' || file === 'answers.json' ? [`private/${file}`] : [])];
          await observe(`${tag}: session submit`, dir, ['session', 'submit', dir, '--answers', answers, '--no-verify', '--no-judge'],
            { names, mayChange, expect: file === 'manifest.json' ? 'refuse' : 'any' });
        }
      });
    }

    cases('reproduce_exp_bench.sh as a FIFO or a symbolic link: submit refuses at once, naming it; nothing is frozen', async () => {
      for (const [way, make] of [['a FIFO', (f: string) => execFileSync('mkfifo', [f])], ['a symbolic link', (f: string) => fs.symlinkSync('/etc/hostname', f)]] as const) {
        const dir = copyTemplate('script');
        const l = new SessionLayout(dir);
        fs.rmSync(l.script);
        make(l.script);
        await observe(`script as ${way}: session submit`, dir, ['session', 'submit', dir, '--answers', answers, '--no-verify', '--no-judge'],
          { names: [l.script], expect: 'refuse', mustHold: true });
        assert.equal(fs.existsSync(l.answers), false, 'nothing was frozen');
      }
    });

    cases('answers.json not JSON: verify runs to a finished record, says the claims were not checked (Docker)', async function () {
      await requireDocker(this);
      const dir = copyTemplate('verify-answers');
      const l = new SessionLayout(dir);
      fs.writeFileSync(l.answers, '{"design": ["a"], "conclu');
      const r = await observe('answers.json truncated: verify', dir, ['verify', dir, '--json', '--timeout', '60'], { names: [l.answers], expect: 'ok', appendOnly: ['private/events.jsonl'], mayChange: ['private/verify'] });
      const rec = JSON.parse(fs.readFileSync(path.join(l.verify, 'latest.json'), 'utf8'));
      assert.equal(rec.status, 'finished', r.stderr);
      assert.match(rec.E_claims.note, /answers\.json/);
    });
  });

  describe('commands run at once', () => {
    cases('two prepares into one new folder: one session comes out complete, the other is refused or finishes it', async () => {
      for (let i = 0; i < 3; i++) {
        const dir = fresh('twice');
        const [a, b] = await Promise.all([prepare(dir), prepare(dir)]);
        const m = JSON.parse(fs.readFileSync(new SessionLayout(dir).manifest, 'utf8'));
        const failed = [a, b].filter((r) => r.code !== 0);
        record(`two prepares at once (${i + 1}): exits ${a.code}, ${b.code}`, {
          lost: [], crash: crashOf(a) ?? crashOf(b), leftovers: leftovers(dir),
          unclear: m.complete !== true ? 'no complete manifest' : failed.length === 2 ? 'both failed' : failed.map((r) => unclearOf(r, [dir])).find(Boolean),
        });
      }
    });

    cases('two submits of one session: one submits, the other is refused; the work is kept', async () => {
      const dir = copyTemplate('two-submits');
      const before = snapshot(dir, notWork);
      const bytes = bytesOf(dir, ['private/events.jsonl']);
      const [a, b] = await Promise.all([submit(dir), submit(dir)]);
      const st = JSON.parse(fs.readFileSync(new SessionLayout(dir).state, 'utf8'));
      record(`two submits at once: exits ${a.code}, ${b.code}`, {
        lost: missingWork(before, dir, bytes, { appendOnly: ['private/events.jsonl'], mayChange: SUBMIT_WRITES }),
        crash: crashOf(a) ?? crashOf(b), leftovers: leftovers(dir),
        unclear: !st.submitted ? 'not submitted' : [a, b].map((r) => unclearOf(r, [dir])).find(Boolean),
      });
    });
  });
});

/**
 * A kill moment, ms after the start: mostly inside the stretch where the command writes (from a
 * little before it first writes to a little after an uninterrupted run ended), at times before it.
 */
function killMoment(rnd: () => number, w: { from: number; to: number }): number {
  const from = rnd() < 0.15 ? 0 : Math.max(0, w.from - 30);
  return Math.round(from + rnd() * (w.to + 20 - from));
}

/** Resolves with the time (Date.now()) at which `p` first exists; polls every millisecond for up to 20 s. */
function firstSeen(p: string): Promise<number> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const tick = () => {
      if (fs.existsSync(p) || Date.now() - t0 > 20_000) resolve(Date.now());
      else setTimeout(tick, 1);
    };
    tick();
  });
}

/** A test of fault cases: its body records cases, and the failures among them fail it at the end. */
function cases(title: string, fn: (this: Mocha.Context) => Promise<void>): Mocha.Test {
  return it(title, async function () {
    try {
      await fn.call(this);
    } finally {
      settle();
    }
  });
}

/** The notes of a session's state.json, or undefined when it is not a readable state. */
function notesOf(dir: string): string[] | undefined {
  try {
    const file = path.join(dir, 'private', 'state.json');
    if (!fs.lstatSync(file).isFile()) return undefined;
    const s = JSON.parse(fs.readFileSync(file, 'utf8'));
    return Array.isArray(s?.notes) ? s.notes.map((x: { text: string }) => x.text) : undefined;
  } catch {
    return undefined;
  }
}
