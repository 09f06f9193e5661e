/**
 * What `expbench report` (collectOutcomes) reads of a session folder: only its own judge record.
 * A proctored session's `channel/` (the window's user data, which the solver's container mounts
 * read-write) held judge files the report counted: a harness judge file with every score at 100
 * made a row of its own for any agent and model; a folder shaped as a session with the run key of
 * the real one and a newer judge record replaced the real judgement (the real one then listed as
 * the "copy"); a FIFO there hung the report; a link there was followed to a host file. Each is
 * planted here as the solver would, and none may count; outside sessions, links and special
 * files named `*.json` are listed as skipped, never read, and so is a harness run's answers file
 * (`…_eval_gen.json`) with judge-shaped score fields. Real sessions through `node dist/cli.js`.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { collectOutcomes } from '../../src/core/interop/collect';
import { cli } from './cli.helpers';

describe('trust: report reads a session only through its own judge record', function () {
  this.timeout(180_000);
  let base: string;
  let runs: string;
  let session: string;
  let real: string;

  before(async function () {
    this.timeout(120_000);
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-report-reads-'));
    runs = path.join(base, 'runs');
    session = path.join(runs, 'ana');
    assert.equal((await cli(['prepare', 'sample/toycal/0', '--out', session, '--cache', path.join(base, 'cache')])).code, 0);
    const answers = path.join(base, 'answers.json');
    fs.writeFileSync(answers, JSON.stringify({ design: ['nothing useful'], conclusion: 'No idea.' }));
    const s = await cli(['session', 'submit', session, '--answers', answers, '--no-verify']);
    assert.equal(s.code, 0, s.stderr);
    real = path.join(session, 'private', 'judge', 'latest.json');
    const record = JSON.parse(fs.readFileSync(real, 'utf8'));
    const manifest = fs.readFileSync(path.join(session, 'private', 'manifest.json'));
    // The plants, where the solver's container can write (channel/editor/ of a proctored session).
    const editor = path.join(session, 'channel', 'editor');
    const harness = path.join(editor, 'logs', 'toycal', 'gpt-5-agent', 'o9-model');
    fs.mkdirSync(harness, { recursive: true });
    fs.writeFileSync(path.join(harness, 'toycal_task_index_0_iter_1_duration_0.5_eval_judge.json'),
      JSON.stringify({ design_score: 100, setup_score: 100, conclusion_score: 'correct', design_evaluation_explanation: '', setup_evaluation_explanation: '', conclusion_evaluation_explanation: '' }));
    const forged = path.join(editor, 'zz');
    fs.mkdirSync(path.join(forged, 'workspace'), { recursive: true });
    fs.mkdirSync(path.join(forged, 'private', 'judge'), { recursive: true });
    fs.writeFileSync(path.join(forged, 'private', 'manifest.json'), manifest);
    fs.writeFileSync(path.join(forged, 'private', 'judge', 'latest.json'), JSON.stringify({ ...record, createdAt: '2099-01-01T00:00:00.000Z' }));
    fs.mkdirSync(path.join(editor, 'fifo', 'private', 'judge'), { recursive: true });
    execFileSync('mkfifo', [path.join(editor, 'fifo', 'private', 'judge', 'latest.json')]);
    fs.mkdirSync(path.join(editor, 'ln', 'private', 'judge'), { recursive: true });
    fs.symlinkSync(real, path.join(editor, 'ln', 'private', 'judge', 'latest.json'));
    // Beside the sessions, in the researcher's own folder: a link and a FIFO named as judge files.
    const other = path.join(runs, 'other');
    fs.mkdirSync(other);
    fs.symlinkSync(path.join(harness, 'toycal_task_index_0_iter_1_duration_0.5_eval_judge.json'), path.join(other, 'linked_eval_judge.json'));
    execFileSync('mkfifo', [path.join(other, 'pipe_eval_judge.json')]);
    // The harness's answers file of an agent's run, carrying judge-shaped score fields.
    fs.writeFileSync(path.join(other, 'toycal_task_index_0_iter_1_duration_0.5_eval_gen.json'), JSON.stringify({ design: 'x', conclusion: 'y', design_score: 100, setup_score: 100, conclusion_score: 'correct' }));
  });
  after(() => { if (base) fs.rmSync(base, { recursive: true, force: true }); });

  it('collectOutcomes: one outcome, the host\'s record; nothing folded; the link and the FIFO beside listed as skipped', async () => {
    const { outcomes, folded, skipped } = await collectOutcomes([runs]);
    assert.deepEqual(outcomes.map((o) => o.source), [real]);
    assert.deepEqual(folded, []);
    const reasons = new Map(skipped.map((s) => [path.basename(s.file), s.reason]));
    assert.match(reasons.get('linked_eval_judge.json') ?? '', /symbolic link/);
    assert.match(reasons.get('pipe_eval_judge.json') ?? '', /FIFO/);
    assert.match(reasons.get('toycal_task_index_0_iter_1_duration_0.5_eval_gen.json') ?? '', /not its judge file/);
    assert.ok(!skipped.some((s) => s.file.includes(`${path.sep}channel${path.sep}`)), `nothing under channel/ was looked at: ${JSON.stringify(skipped)}`);
  });

  it('`report --json`: one row, the host\'s judgement (D and I of a useless answer 0 of 1)', async () => {
    const r = await cli(['report', runs, '--json']);
    assert.equal(r.code, 0, r.stderr);
    type Rate = { k: number; n: number };
    const out = JSON.parse(r.stdout) as { rows: Array<{ group: string; tasks: number; metrics: { D: Rate; I: Rate } }>; folded?: unknown[] };
    assert.deepEqual(out.rows.map((x) => x.group), ['runs'], JSON.stringify(out.rows));
    assert.equal(out.rows[0].tasks, 1);
    // the host's own judgement of the useless answer: 0 of 1 for D and I (the forged record said every item met)
    assert.deepEqual([out.rows[0].metrics.D, out.rows[0].metrics.I].map((m) => [m.k, m.n]), [[0, 1], [0, 1]], JSON.stringify(out.rows[0].metrics));
    assert.ok(!out.folded?.length, JSON.stringify(out.folded));
  });

  it('a judge file given by name that is a link or a FIFO is refused naming it, at once', async () => {
    const { outcomes, skipped } = await collectOutcomes([path.join(runs, 'other', 'linked_eval_judge.json'), path.join(runs, 'other', 'pipe_eval_judge.json')]);
    assert.equal(outcomes.length, 0);
    assert.equal(skipped.length, 2, JSON.stringify(skipped));
    assert.match(skipped[0].reason, /symbolic link/);
    assert.match(skipped[1].reason, /FIFO/);
  });
});
