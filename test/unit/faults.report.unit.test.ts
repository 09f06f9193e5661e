/**
 * `report` over copies of one run (issue 33, the fault round's findings): 2,000 copies of one
 * judged session (one run key: `runKeyForSession`, the same for a copy of the folder) were counted
 * as n = 2000 without a word. A run is counted once, whatever number of copies, and the report says
 * what it folded (text and `--json`); two preparations of one task are two runs and both count.
 * Also the core (`collectOutcomes`) on the same folders. Through `node dist/cli.js`.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { collectOutcomes } from '../../src/core/interop/collect';
import { cli } from './cli.helpers';

describe('faults: report counts a run once, however many copies of it are given', function () {
  this.timeout(180_000);
  let base: string;
  let runs: string;
  const COPIES = 2000;

  before(async function () {
    this.timeout(120_000);
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-faults-report-'));
    runs = path.join(base, 'runs');
    const answers = path.join(base, 'answers.json');
    fs.writeFileSync(answers, JSON.stringify({ design: ['Independent: temperature (values: 1, 2)'], conclusion: 'ECE drops from 0.12 to 0.03.' }));
    for (const name of ['a', 'b']) {
      const dir = path.join(runs, name);
      assert.equal((await cli(['prepare', 'sample/toycal/0', '--out', dir, '--cache', path.join(base, 'cache')])).code, 0);
      const s = await cli(['session', 'submit', dir, '--answers', answers, '--no-verify']);
      assert.equal(s.code, 0, s.stderr);
    }
    // Copies of session a: the whole folder once (cp -a), then the two files of it the report reads (manifest, judge record), each in a folder of its own.
    execFileSync('cp', ['-a', path.join(runs, 'a'), path.join(runs, 'a-copy')]);
    const copies = path.join(runs, 'copies');
    fs.mkdirSync(copies);
    const manifest = fs.readFileSync(path.join(runs, 'a', 'private', 'manifest.json'));
    const judged = fs.readFileSync(path.join(runs, 'a', 'private', 'judge', 'latest.json'));
    for (let i = 0; i < COPIES - 2; i++) {
      fs.mkdirSync(path.join(copies, `c${i}`, 'private', 'judge'), { recursive: true });
      fs.writeFileSync(path.join(copies, `c${i}`, 'private', 'manifest.json'), manifest);
      fs.writeFileSync(path.join(copies, `c${i}`, 'private', 'judge', 'latest.json'), judged);
    }
  });
  after(() => { if (base) fs.rmSync(base, { recursive: true, force: true }); });

  it(`${COPIES} copies of one session and one other session of the task: n = 2, and the report says it folded ${COPIES - 1} copies`, async () => {
    const r = await cli(['report', runs, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { rows: Array<{ tasks: number }>; folded: Array<{ run: string; counted: string; copies: string[] }> };
    assert.equal(out.rows.length, 1);
    assert.equal(out.rows[0].tasks, 2, `the table counts ${out.rows[0].tasks} runs of one task (2 preparations)`);
    assert.equal(out.folded?.length, 1, JSON.stringify(out.folded));
    assert.equal(out.folded[0].copies.length, COPIES - 1);
    assert.match(out.folded[0].run, /^session:[0-9a-f]{16}$/);
    const text = await cli(['report', runs]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stderr, new RegExp(`folded ${COPIES - 1} copies of run session:[0-9a-f]{16}.*counted once`));
    assert.match(text.stdout, /\t2\t/, 'the text table says n = 2');
  });

  it('collectOutcomes: one outcome per run, the copies listed with the one counted', async () => {
    const { outcomes, folded } = await collectOutcomes([runs]);
    assert.equal(outcomes.length, 2);
    assert.equal(folded.length, 1);
    assert.equal(folded[0].copies.length, COPIES - 1);
    assert.ok(!folded[0].copies.includes(folded[0].counted));
  });
});
