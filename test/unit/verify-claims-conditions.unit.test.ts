/**
 * Derived claims over sweeps, grids and ablations (issue 33, item 1): two numbers printed under one
 * label are two conditions when their lines differ in another printed key (`n=`, `lr=`; `seed=`
 * only when the sentence names it), and quantity names match through the field's table of
 * abbreviations and synonyms (src/core/verify/quantities.ts). The issue's own case runs through
 * `verify --check` on a real container at the end.
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkClaims } from '../../src/core/verify/claims';
import { producedNumbers } from '../../src/core/verify/produced';
import { quantitiesOf, QUANTITIES } from '../../src/core/verify/quantities';
import { SessionLayout } from '../../src/core/layout';
import type { VerificationRecord } from '../../src/core/verify/record';
import { requireDocker } from '../harness/docker';

const status = (conclusion: string, text: string) => checkClaims(conclusion, [{ source: 'stdout', text }]).claims.map((c) => [c.text, c.status]);

const SWEEP = 'n=100 mae=0.1563\nn=1000 mae=0.0521\nn=10000 mae=0.0142\nn=100000 mae=0.0041\n';
const CASE = 'The error falls from 0.1563 at 100 samples to 0.0041 at 100000 samples, a 97.4% reduction.';

describe('claims: conditions and replicates of one label (issue 33)', () => {
  it('the issue\'s sweep: "a 97.4% reduction" of the mae at n=100 and n=100000 is derived; an invented one is not', () => {
    const r = checkClaims(CASE, [{ source: 'stdout', text: SWEEP }]);
    assert.deepEqual(r.claims.map((c) => [c.text, c.status]), [['0.1563', 'found'], ['100', 'found'], ['0.0041', 'found'], ['100000', 'found'], ['97.4%', 'derived']]);
    assert.deepEqual(r.claims[4].derived?.sources, [{ source: 'stdout', line: 4, text: '0.0041', label: 'mae' }, { source: 'stdout', line: 1, text: '0.1563', label: 'mae' }]);
    assert.equal(r.allProduced, true);
    assert.deepEqual(status(CASE.replace('97.4%', '96.1%'), SWEEP).at(-1), ['96.1%', 'not found']);
  });

  it('reads each line\'s keys: the index numbers of seed and epoch too, an arrow between two numbers', () => {
    const p = producedNumbers('stdout', 'seed 3 epoch 12 lr=0.01 acc=0.87\nECE: 0.0322 -> 0.0123\n');
    assert.deepEqual(p[0].keys, [{ key: 'seed', value: '3' }, { key: 'epoch', value: '12' }, { key: 'lr', value: '0.01' }, { key: 'acc', value: '0.87' }]);
    assert.deepEqual(p.filter((n) => n.line === 2).map((n) => [n.text, n.label, n.arrow ?? false]), [['0.0322', 'ECE', false], ['0.0123', 'ECE', true]]);
  });

  it('lr=0.1 and lr=0.01 are two conditions: "accuracy" names `acc`; two lines differing in no key, or only in a seed, are replicates', () => {
    const grid = 'lr=0.1 acc=0.812\nlr=0.01 acc=0.874\n';
    const claim = 'Accuracy improved from 0.812 to 0.874 when the learning rate went from 0.1 to 0.01, a 7.6% relative gain.';
    assert.deepEqual(status(claim, grid).at(-1), ['7.6%', 'derived']);
    const seeds = 'seed=0 acc=0.812\nseed=1 acc=0.874\n';
    const across = 'Accuracy improved from 0.812 to 0.874, a 7.6% relative gain.';
    assert.deepEqual(status(across, seeds).at(-1), ['7.6%', 'not found'], 'two seeds of one setting are replicates');
    assert.deepEqual(status(across, 'acc=0.812\nacc=0.874\n').at(-1), ['7.6%', 'not found'], 'no key tells the lines apart');
    // the sentence names the seed: the seeds are what is compared
    assert.deepEqual(status('Accuracy went from 0.812 with seed 0 to 0.874 with seed 1, a 7.6% relative gain.', seeds).at(-1), ['7.6%', 'derived']);
    // one line, an arrow between: before and after
    assert.deepEqual(status('The error falls from 0.1563 to 0.0041, a 97.4% reduction.', 'mae: 0.1563 -> 0.0041\n').at(-1), ['97.4%', 'derived']);
    assert.deepEqual(status('The error falls from 0.1563 to 0.0041, a 97.4% reduction.', 'mae: 0.1563, 0.0041\n').at(-1), ['97.4%', 'not found']);
  });

  it('every quantity of the table: a sentence naming it by a synonym counts the label printed by an abbreviation', () => {
    const pairs: Array<[string, string]> = [
      ['acc', 'accuracy'], ['top1', 'top-1 accuracy'], ['top5', 'top-5 accuracy'], ['mae', 'mean absolute error'], ['mse', 'mean squared error'],
      ['rmse', 'root mean squared error'], ['ece', 'expected calibration error'], ['nll', 'negative log likelihood'], ['f1', 'F1 score'],
      ['auroc', 'area under the curve'], ['ppl', 'perplexity'], ['bleu', 'BLEU'], ['wer', 'word error rate'], ['cer', 'character error rate'], ['miou', 'mean IoU'],
    ];
    assert.equal(new Set(pairs.map(([l]) => [...quantitiesOf(l, false)][0])).size, QUANTITIES.length, 'one pair per quantity');
    for (const [label, name] of pairs) {
      const run = `${label}=0.5\nother=0.7000\n`;
      const r = checkClaims(`The ${name} is 0.7000.`, [{ source: 'stdout', text: run }]);
      assert.equal(r.claims[0].status, 'not found', `${name}: 0.7000 is another quantity's`);
      assert.deepEqual(r.claims[0].otherQuantity?.map((o) => o.label), ['other'], name);
      assert.equal(checkClaims(`The ${name} is 0.5.`, [{ source: 'stdout', text: run }]).claims[0].status, 'found', name);
      const sweep = `n=100 ${label}=0.1563\nn=100000 ${label}=0.0041\n`;
      assert.deepEqual(status(`The ${name} falls from 0.1563 to 0.0041, a 97.4% reduction.`, sweep).at(-1), ['97.4%', 'derived'], name);
    }
    // broader words count in a sentence ("the error" names mae, "the loss" nll) but never inside "standard error"
    assert.deepEqual([...quantitiesOf('the error falls', true)].sort(), ['cer', 'ece', 'mae', 'mse', 'rmse', 'wer']);
    assert.deepEqual([...quantitiesOf('the loss falls', true)], ['nll']);
    assert.deepEqual([...quantitiesOf('accuracy 0.93 with a standard error of 0.01', true)], ['accuracy']);
    assert.deepEqual([...quantitiesOf('the error falls', false)], [], 'a label "error" is its own word, not every error');
    assert.deepEqual([...quantitiesOf('val/mIoU', false)], ['iou']);
  });
});

describe('claims: the issue\'s sweep through verify --check (Docker, the compiled CLI)', function () {
  this.timeout(180_000);
  const REPO = path.resolve(__dirname, '../../..');
  const CLI = path.join(REPO, 'out', 'src', 'cli', 'main.js');
  const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_JUDGE_)/.test(k)));
  const cli = (...args: string[]) => new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: REPO, env: ENV, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
  let dir: string;
  before(async function () { await requireDocker(this); });
  after(() => { if (dir) fs.rmSync(dir, { recursive: true, force: true }); });

  it('a run printing `n=100 mae=0.1563` … `n=100000 mae=0.0041`: "a 97.4% reduction" passes --check (exit 0)', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-sweep-'));
    const root = path.join(dir, 's');
    const prep = await cli('prepare', 'sample/toycal/0', '--out', root, '--cache', path.join(dir, 'cache'));
    assert.equal(prep.code, 0, prep.stderr);
    const layout = new SessionLayout(root);
    fs.writeFileSync(layout.script, '#!/usr/bin/env bash\nset -euo pipefail\npython3 -c "\nfor n, e in [(100, 0.1563), (1000, 0.0521), (10000, 0.0142), (100000, 0.0041)]:\n    print(f\'n={n} mae={e:.4f}\')\n"\n');
    const answers = path.join(dir, 'answers.json');
    fs.writeFileSync(answers, JSON.stringify({ design: ['Independent: n', 'Dependent: mae'], conclusion: CASE }));
    const sub = await cli('session', 'submit', root, '--answers', answers, '--no-verify', '--no-judge');
    assert.equal(sub.code, 0, sub.stderr);
    const ok = await cli('verify', root, '--json', '--check', '--timeout', '120');
    const r = JSON.parse(ok.stdout) as VerificationRecord;
    assert.equal(r.E_clean, true, JSON.stringify(r.error ?? r.exitCode));
    assert.deepEqual(r.E_claims.claims.map((c) => [c.text, c.status]), [['0.1563', 'found'], ['100', 'found'], ['0.0041', 'found'], ['100000', 'found'], ['97.4%', 'derived']]);
    assert.equal(ok.code, 0, ok.stderr);
  });
});
