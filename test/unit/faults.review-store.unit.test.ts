/**
 * Damaged judgement files in the review store (issue 33, the fault round's findings): a torn
 * file, an empty one, `{}`, a judgement of version 99, a folder and a symbolic link named like a
 * judgement, each beside real verdicts. `curate queue`, `curate export` and `curate agreement`
 * (the bundled CLI) must name every one with why, never drop one without a word; what each command
 * then does (docs/review.md "Damaged files"): queue and agreement report the rest and exit 2,
 * export refuses (exit 2) and writes nothing, because a release missing a verdict or an edit would
 * say something other than what the curators decided.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cli, OFFLINE_ENV } from './cli.helpers';

describe('faults: damaged judgement files in the review store (curate queue, export, agreement)', function () {
  this.timeout(120_000);
  let base: string;
  let review: string;
  let damaged: Array<{ what: string; file: string; why: RegExp }>;

  before(async () => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-faults-review-'));
    review = path.join(base, 'review');
    for (const [verdict, by] of [['valid', 'curator-a@example.org'], ['needs-fix', 'curator-b@example.org']]) {
      const r = await cli(['curate', 'verdict', 'sample/toycal/0', verdict, '--reason', `checked by ${by}`, '--by', by, '--review', review, '--json']);
      assert.equal(r.code, 0, r.stderr);
    }
    const folder = path.dirname(findJson(review)[0]);
    const good = fs.readFileSync(findJson(review)[0], 'utf8');
    const j = JSON.parse(good);
    const put = (name: string, body: string) => { const f = path.join(folder, name); fs.writeFileSync(f, body); return f; };
    const outside = path.join(base, 'elsewhere.json');
    fs.writeFileSync(outside, JSON.stringify({ ...j, id: 'ffffffffffffffff', value: 'invalid' }));
    const link = path.join(folder, '20990101T000000.000Z-eeeeeeeeeeeeeeee.json');
    fs.symlinkSync(outside, link);
    const dir = path.join(folder, '20990101T000000.000Z-dddddddddddddddd.json');
    fs.mkdirSync(dir);
    damaged = [
      { what: 'torn', file: put('20990101T000000.000Z-aaaaaaaaaaaaaaaa.json', good.slice(0, Math.floor(good.length / 2))), why: /not valid JSON/ },
      { what: 'empty', file: put('20990101T000000.000Z-bbbbbbbbbbbbbbbb.json', ''), why: /empty/ },
      { what: '{}', file: put('20990101T000000.000Z-cccccccccccccccc.json', '{}'), why: /not a judgement/ },
      { what: 'version 99', file: put('20990101T000000.000Z-9999999999999999.json', JSON.stringify({ ...j, version: 99, id: '9999999999999999' })), why: /version 99/ },
      { what: 'a folder', file: dir, why: /folder/ },
      { what: 'a symbolic link', file: link, why: /symbolic link/ },
    ];
  });
  after(() => { if (base) fs.rmSync(base, { recursive: true, force: true }); });

  /** Every damaged file is named on stderr with its reason. */
  function namesEach(stderr: string, command: string): void {
    for (const d of damaged) {
      const line = stderr.split('\n').find((l) => l.includes(d.file));
      assert.ok(line, `${command}: the ${d.what} file ${d.file} is not named:\n${stderr}`);
      assert.match(line!, d.why, `${command}: the ${d.what} file's line does not say why: ${line}`);
    }
  }

  it('curate queue: the verdicts still read, each damaged file named with why, exit 2', async () => {
    const r = await cli(['curate', 'queue', '--review', review]);
    assert.match(r.stdout, /sample\/toycal\/0: DISAGREEMENT/, 'the two readable verdicts are in the queue');
    namesEach(r.stderr, 'queue');
    assert.equal(r.code, 2, r.stderr);
    const j = await cli(['curate', 'queue', '--review', review, '--json']);
    assert.equal(j.code, 2);
    assert.equal(JSON.parse(j.stdout).length, 1, 'the JSON queue is still printed');
    namesEach(j.stderr, 'queue --json');
  });

  it('curate export: refused with exit 2, each damaged file named, nothing written', async () => {
    const out = path.join(base, 'export');
    const r = await cli(['curate', 'export', '--out', out, '--review', review]);
    namesEach(r.stderr, 'export');
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /nothing was exported/);
    assert.equal(fs.existsSync(out), false, 'no export folder');
    assert.deepEqual(fs.readdirSync(base).filter((n) => n.includes('export')), [], 'no temporary folder beside it');
  });

  it('curate agreement: the report of what could be read, each damaged file named, exit 2', async () => {
    const sessions = path.join(base, 'no-sessions');
    fs.mkdirSync(sessions);
    const r = await cli(['curate', 'agreement', sessions, '--review', review], { env: OFFLINE_ENV });
    namesEach(r.stderr, 'agreement');
    assert.equal(r.code, 2, r.stderr);
  });
});

function findJson(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...findJson(p));
    else if (e.name.endsWith('.json')) out.push(p);
  }
  return out.sort();
}
