import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { removeWorkContainer } from '../../src/core/sandbox';
import { readEvents } from '../../src/core/session/events';
import { SessionLayout } from '../../src/core/layout';
import { Session } from '../../src/core/session/session';
import { readState } from '../../src/core/session/store';
import { requireDocker } from '../harness/docker';
import { makeSessionFolder } from './session-fixtures';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'out', 'src', 'cli', 'main.js');
/** The environment of the CLI under test: no judge endpoint (the heuristic judge runs offline). */
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_JUDGE_)/.test(k)));

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT, env: ENV, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('expbench session (the compiled CLI)', function () {
  this.timeout(120_000);
  const cleanup: string[] = [];
  after(async () => { for (const d of cleanup) await fsp.rm(d, { recursive: true, force: true }).catch(() => undefined); });
  const folder = async () => { const l = await makeSessionFolder(); cleanup.push(l.root); return l; };

  it('show refuses a folder that is not a session, naming it', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-notasession-'));
    cleanup.push(dir);
    const r = await cli('session', 'show', dir);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`^expbench: ${dir}: not a session folder`));
    const l = await folder();
    const r2 = await cli('session', 'show', l.root);
    assert.equal(r2.code, 1);
    assert.ok(r2.stderr.includes(`${l.state}: the session has no state yet`), r2.stderr);
  });

  it('show prints the state, the clock (to the last heartbeat) and the events; reports a torn last line', async () => {
    const l = await folder();
    let t = Date.parse('2026-03-01T09:00:00.000Z');
    const s = await Session.open(l, { client: 'test', now: () => t, budgetMs: 60 * 60_000 });
    await s.clock.start();
    t += 5 * 60_000;
    await s.clock.pause('coffee');
    await s.clock.resume();
    t += 2 * 60_000;
    s.clock.heartbeat();
    await s.addNote('found the data loader');
    await s.setPhase('execution');
    await s.store.flush(); // the window is killed here: no close()
    await s.events.settled();
    await fsp.appendFile(l.events, '{"v":1,"at":"2026-03-01T09:07:00.000Z","type":"note.ad');

    const r = await cli('session', 'show', l.root, '--json');
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.state.phase, 'execution');
    assert.deepEqual(j.clock, { status: 'running', workingMs: 7 * 60_000, byActor: { human: 7 * 60_000, agent: 0 }, budgetMs: 60 * 60_000, lastHeartbeat: '2026-03-01T09:07:00.000Z', pauses: 1 });
    assert.deepEqual(j.events.map((e: { type: string }) => e.type), ['session.opened', 'clock.started', 'clock.paused', 'clock.resumed', 'note.added', 'phase.changed']);
    assert.equal(j.eventProblems.torn.line, 7);

    const text = await cli('session', 'show', l.root);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /^phase\s+execution$/m);
    assert.match(text.stdout, /^clock\s+running, working 7:00 of 1:00:00 \(12%\), counted to the last heartbeat 2026-03-01T09:07:00\.000Z; 1 pause\(s\)$/m);
    assert.match(text.stdout, /clock\.paused \(coffee\) at 5:00/);
    assert.match(text.stdout, /found the data loader/);
    assert.match(text.stderr, /events\.jsonl:7: torn last line/);
  });

  it('submit --no-verify --no-judge freezes the answers and writes the harness files; a second submit is refused', async () => {
    const l = await folder();
    await fsp.writeFile(path.join(l.workspace, 'train.py'), 'print("accuracy 0.5")\n');
    await fsp.writeFile(l.script, 'python3 train.py\n');
    const answers = path.join(l.root, 'answers-in.json');
    await fsp.writeFile(answers, JSON.stringify({ design: ['Independent: lr — 0.1 vs 0.01', 'Dependent: accuracy'], conclusion: 'Accuracy is 0.5.' }));
    const r = await cli('session', 'submit', l.root, '--answers', answers, '--no-verify', '--no-judge', '--json');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.verify, undefined);
    assert.equal(out.judge, undefined);
    assert.deepEqual(out.design.independent, [{ name: 'lr', description: '0.1 vs 0.01' }]);
    for (const f of ['answers.json', 'design.json', 'harness/answers.json', 'harness/patch.diff', 'harness/reproduce_exp_bench.sh']) {
      await fsp.access(path.join(l.private, f));
    }
    assert.match(await fsp.readFile(path.join(l.harness, 'patch.diff'), 'utf8'), /^\+print\("accuracy 0\.5"\)$/m);
    assert.ok((await readState(l.state))?.submitted);
    const again = await cli('session', 'submit', l.root, '--answers', answers, '--no-verify', '--no-judge');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already submitted/);
  });

  it('submit refuses an answers file that is not JSON or not of the harness form, naming it; nothing is frozen', async () => {
    const l = await folder();
    const bad = path.join(l.root, 'bad.json');
    await fsp.writeFile(bad, '{"design": ');
    let r = await cli('session', 'submit', l.root, '--answers', bad, '--no-verify', '--no-judge');
    assert.equal(r.code, 1);
    assert.ok(r.stderr.startsWith(`expbench: ${bad}: the answers file is not JSON`), r.stderr);
    await fsp.writeFile(bad, '{"design": ["x"]}');
    r = await cli('session', 'submit', l.root, '--answers', bad, '--no-verify', '--no-judge');
    assert.equal(r.code, 1);
    assert.ok(r.stderr.startsWith(`expbench: ${bad}: expected the harness form`), r.stderr);
    await assert.rejects(fsp.access(l.answers));
  });

  it('give-up records an explicit give-up with the time', async () => {
    const l = await folder();
    const r = await cli('session', 'give-up', l.root, '--reason', 'no GPU');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^gave up .* after 0:00 of working time$/m);
    const state = (await readState(l.state))!;
    assert.equal(state.gaveUp?.reason, 'no GPU');
    assert.equal((await readEvents(l.events)).events.at(-1)?.type, 'gave_up');
  });

  describe('with the verifier (Docker) and the heuristic judge', () => {
    let docker: Docker;
    before(async function () { docker = await requireDocker(this); });

    it('prepare the sample task, solve it, submit: verify.finished and judge.finished recorded', async () => {
      const root = path.join(await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-cli-submit-')), 's');
      cleanup.push(path.dirname(root));
      const prep = await cli('prepare', 'sample/toycal/0', '--out', root);
      assert.equal(prep.code, 0, prep.stderr);
      const l = new SessionLayout(root);
      const solution = path.join(ROOT, 'samples', 'solutions', 'toy-calibration');
      await fsp.mkdir(path.join(l.workspace, 'experiments'), { recursive: true });
      await fsp.copyFile(path.join(solution, 'temperature_scaling.py'), path.join(l.workspace, 'experiments', 'temperature_scaling.py'));
      await fsp.copyFile(path.join(solution, 'reproduce_exp_bench.sh'), l.script);
      try {
        const r = await cli('session', 'submit', root, '--answers', path.join(solution, 'answers.json'), '--json');
        assert.equal(r.code, 0, r.stderr);
        const out = JSON.parse(r.stdout);
        assert.equal(out.verify.ok, true, JSON.stringify(out.verify));
        assert.match(out.verify.summary, /claims 4\/4 found/);
        assert.equal(out.judge.ok, true, JSON.stringify(out.judge));
        assert.match(out.judge.summary, /^heuristic: /);
        await fsp.access(path.join(l.root, out.verify.record));
        await fsp.access(path.join(l.root, out.judge.record));
        const types = (await readEvents(l.events)).events.map((e) => e.type);
        assert.deepEqual(types.slice(-3), ['submitted', 'verify.finished', 'judge.finished']);
      } finally {
        const manifest = JSON.parse(await fsp.readFile(l.manifest, 'utf8'));
        if (manifest.sessionId) await removeWorkContainer(docker, manifest.sessionId).catch(() => undefined);
      }
    });
  });
});
