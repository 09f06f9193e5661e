/**
 * One numbers check (issue 14, parts 4 and 7): uncertainties (`±`, `+-`), labels (a claim counts
 * only a printed number of the same quantity; numbers inside formulas are not values), derived
 * claims (ratio, difference, percent change of two printed numbers), the same answer from the
 * Conclusion panel's check (claimsStatus, real files in a session folder) and the verifier's
 * (checkClaims), and `verify --check` on a real run in Docker (the compiled CLI).
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkClaims, extractClaims, scanNumbers } from '../../src/core/verify/claims';
import { DERIVED_RULES, MAX_DERIVED_INPUTS } from '../../src/core/verify/derived';
import { producedNumbers } from '../../src/core/verify/produced';
import { claimsStatus } from '../../src/core/verify/sessionClaims';
import { SessionLayout } from '../../src/core/layout';
import type { VerificationRecord } from '../../src/core/verify/record';
import { requireDocker } from '../harness/docker';

const status = (conclusion: string, text: string) => checkClaims(conclusion, [{ source: 'stdout', text }]).claims.map((c) => [c.text, c.status]);

describe('claims: uncertainties', () => {
  it('reads `+-`, `+/-` and `±` as uncertainty, never as a negative number', () => {
    const n = scanNumbers('smECE: 0.00331+-0.00043, acc 0.93 +/- 0.01, loss 0.25 ± 0.02, d -0.5', false);
    assert.deepEqual(n.map((x) => [x.value, x.uncertainty ?? false]), [[0.00331, false], [0.00043, true], [0.93, false], [0.01, true], [0.25, false], [0.02, true], [-0.5, false]]);
    const c = extractClaims('The smooth ECE is 0.00331+-0.00043.');
    assert.deepEqual(c.map((x) => [x.text, x.value, x.uncertainty ?? false]), [['0.00331', 0.00331, false], ['0.00043', 0.00043, true]]);
  });

  it('a claimed 0.00331 and its ±0.00043 are found in `0.00331+-0.00043`; an uncertainty matches uncertainties only', () => {
    assert.deepEqual(status('smECE is 0.00331 ± 0.00043 on the synthetic data.', 'smECE: 0.00331+-0.00043\n'), [['0.00331', 'found'], ['0.00043', 'found']]);
    assert.deepEqual(status('smECE is 0.00043.', 'smECE: 0.00331+-0.00043\n'), [['0.00043', 'not found']]);
    assert.deepEqual(status('smECE is 0.00331 with a standard deviation of 0.00043.', 'smECE: 0.00331+-0.00043\n'), [['0.00331', 'found'], ['0.00043', 'found']]);
  });
});

describe('claims: the same quantity (labels and formulas)', () => {
  it('labels a printed number with the words before it (or the previous label), and skips numbers of names and formulas', () => {
    const p = producedNumbers('stdout', 'E[y|f] = 0.5 + 0.4*sin(2*pi*f)\nECE: 0.0322 -> 0.0123, test_accuracy = 0.905\n  "ece_after": 0.0123,\nf1 0.88 layer3\n');
    assert.deepEqual(p.map((n) => [n.text, n.label, n.line]), [
      ['0.0322', 'ECE', 2], ['0.0123', 'ECE', 2], ['0.905', 'test_accuracy', 2], ['0.0123', 'ece_after', 3], ['0.88', 'f1', 4],
    ]);
  });

  it('a claimed 0.40 does not match the 0.4 inside a formula label', () => {
    assert.deepEqual(status('The oscillation amplitude is 0.40 and smECE 0.0912.', 'true function: E[y|f] = 0.5 + 0.4*sin(2*pi*f)\nsmECE = 0.0912\n'), [['0.40', 'not found'], ['0.0912', 'found']]);
  });

  it('a value printed under another quantity\'s label is not counted (listed in otherQuantity); unlabelled values count', () => {
    const r = checkClaims('The ECE is 0.905.', [{ source: 'stdout', text: 'accuracy = 0.905\nECE = 0.0123\n' }]);
    assert.equal(r.claims[0].status, 'not found');
    assert.deepEqual(r.claims[0].otherQuantity, [{ source: 'stdout', line: 1, label: 'accuracy' }]);
    assert.deepEqual(status('The ECE is 0.905.', '0.905 0.0123\n'), [['0.905', 'found']]);
    // prefixes and acronyms name the same quantity: acc/accuracy, ECE/expected calibration error
    assert.deepEqual(status('Accuracy 0.93; the expected calibration error 0.0123.', 'acc=0.9312\nECE=0.0123\n'), [['0.93', 'found'], ['0.0123', 'found']]);
    // a sentence naming nothing the outputs label cannot be told apart: every value counts
    assert.deepEqual(status('We got 0.905.', 'accuracy = 0.905\n'), [['0.905', 'found']]);
  });
});

describe('claims: derived from two printed numbers', () => {
  const RUN = 'ECE before = 0.1140\nECE after = 0.0030\naccuracy = 0.9050\n';

  it('"a 97.4% reduction" of two printed ECEs is derived, with its sources; allProduced but not allFound', () => {
    const r = checkClaims('Temperature scaling cut the ECE from 0.1140 to 0.0030, a 97.4% reduction.', [{ source: 'stdout', text: RUN }]);
    const c = r.claims.find((x) => x.text === '97.4%')!;
    assert.equal(c.status, 'derived');
    assert.equal(c.found, false);
    assert.equal(c.derived?.op, 'percent change');
    assert.ok(Math.abs(c.derived!.value - 97.368) < 0.001, String(c.derived?.value));
    assert.deepEqual(c.derived?.sources, [
      { source: 'stdout', line: 2, text: '0.0030', label: 'ECE after' }, { source: 'stdout', line: 1, text: '0.1140', label: 'ECE before' },
    ]);
    assert.equal(r.allFound, false);
    assert.equal(r.allProduced, true);
  });

  it('an invented number is neither found nor derived', () => {
    const r = checkClaims('The ECE fell from 0.1140 to 0.0030, a 95.1% reduction.', [{ source: 'stdout', text: RUN }]);
    assert.equal(r.claims.find((x) => x.text === '95.1%')?.status, 'not found');
    assert.equal(r.allProduced, false);
  });

  it('ratios and differences; the claim\'s precision is the tolerance', () => {
    assert.deepEqual(status('The ECE went from 0.1140 to 0.0030: 38x lower after scaling, it dropped by 0.111.', RUN),
      [['0.1140', 'found'], ['0.0030', 'found'], ['38x', 'derived'], ['0.111', 'derived']]);
    assert.deepEqual(status('The ECE went from 0.1140 to 0.0030, 38.1x lower.', RUN).at(-1), ['38.1x', 'not found']); // 38.0 at 0.05
    assert.deepEqual(status('Accuracy improved by 2.3 pp (0.882 to 0.905).', 'accuracy before = 0.882\naccuracy after = 0.905\n').at(0), ['2.3 pp', 'derived']);
  });

  it('tightened: the sentence names the operation and the quantity, the two numbers are of one quantity and stated', () => {
    assert.deepEqual(status('The ECE was 0.1140 and 0.0030, 97.4%.', RUN).at(-1), ['97.4%', 'not found']);
    // 0.9050 vs 0.0030: a ratio of accuracy to ECE is not a derived claim
    const ratio = 'Accuracy 0.9050 is 301.7 times higher than the ECE after, 0.0030.';
    assert.deepEqual(status(ratio, RUN).at(1), ['301.7', 'not found']);
    const loose = checkClaims(ratio, [{ source: 'stdout', text: RUN }], { ...DERIVED_RULES, sameLabel: false });
    assert.equal(loose.claims[1].status, 'derived');
    // the sentence must name the quantity: "a 97.4% reduction" of nothing named is not derived
    assert.deepEqual(status('We saw 0.1140 and 0.0030, a 97.4% reduction.', RUN).at(-1), ['97.4%', 'not found']);
    // the sources must be stated in the conclusion
    assert.deepEqual(status('The ECE fell by a 97.4% reduction.', RUN), [['97.4%', 'not found']]);
    assert.equal(checkClaims('The ECE fell by a 97.4% reduction.', [{ source: 'stdout', text: RUN }], { ...DERIVED_RULES, sourcesStated: false }).claims[0].status, 'derived');
    assert.deepEqual(DERIVED_RULES, { requireWord: true, sameLabel: true, requireNamed: true, sourcesStated: true });
  });

  it('combines numbers of one group (run) only, and at most MAX_DERIVED_INPUTS of them', () => {
    const r = checkClaims('The ECE fell from 0.1140 to 0.0030, a 97.4% reduction.', [
      { source: 'a.log', text: 'ECE before = 0.1140\n', group: 'a' }, { source: 'b.log', text: 'ECE after = 0.0030\n', group: 'b' }]);
    assert.deepEqual(r.claims.map((c) => c.status), ['found', 'found', 'not found']);
    const long = Array.from({ length: 5000 }, (_, i) => `loss ${(1 + i / 10000).toFixed(4)}`).join('\n');
    const t0 = Date.now();
    const big = checkClaims('The loss fell by 42.42%, 17.77% and 3.33% relative.', [{ source: 'stdout', text: long }], { ...DERIVED_RULES, sourcesStated: false });
    assert.equal(big.claims.length, 3);
    assert.ok(Date.now() - t0 < 5000, `bounded search took ${Date.now() - t0} ms`);
    assert.equal(MAX_DERIVED_INPUTS, 400);
  });
});

describe('claims: the Conclusion panel and the verifier agree', () => {
  let root: string;
  beforeEach(() => { root = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-claims-')); });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('`0.00331+-0.00043` in a run\'s output: 0.00331 is found by both; the latest run is cited; its results file is searched', async () => {
    const later = () => new Promise((r) => setTimeout(r, 20));
    const layout = new SessionLayout(root);
    fs.mkdirSync(layout.runs, { recursive: true });
    fs.mkdirSync(path.join(layout.workspace, 'results'), { recursive: true });
    const older = 'run-20261201T100000Z-aaaa.log';
    const latest = 'run-20261201T110000Z-bbbb.log';
    fs.writeFileSync(path.join(layout.runs, older), 'smECE: 0.00331+-0.00043\n');
    fs.mkdirSync(layout.workspace, { recursive: true });
    fs.writeFileSync(path.join(layout.workspace, 'reproduce_exp_bench.sh'), 'echo 0.000626\n'); // written before the run: not an output
    await later();
    const stdout = 'seed 0 done\nsmECE: 0.00331+-0.00043\n';
    // the run: its log is created, it writes its results file, its log ends
    fs.writeFileSync(path.join(layout.runs, latest), 'seed 0 done\n');
    const results = '{\n  "mse_binned": 0.000626\n}\n';
    fs.writeFileSync(path.join(layout.workspace, 'results', 'diagrams.json'), results);
    fs.appendFileSync(path.join(layout.runs, latest), 'smECE: 0.00331+-0.00043\n');

    const conclusion = 'The smooth calibration error smECE is 0.00331 ± 0.00043; the binned MSE is 0.000626.';
    const panel = await claimsStatus(layout, conclusion);
    assert.deepEqual(panel.logs, [`private/runs/${latest}`, `private/runs/${older}`]);
    assert.deepEqual(panel.files, ['workspace/results/diagrams.json']);
    const verifier = checkClaims(conclusion, [{ source: 'stdout', text: stdout }, { source: 'results/diagrams.json', text: results }]);
    const rows = (r: typeof verifier) => r.claims.map((c) => [c.text, c.status, c.found]);
    assert.deepEqual(rows(panel), [['0.00331', 'found', true], ['0.00043', 'found', true], ['0.000626', 'found', true]]);
    assert.deepEqual(rows(panel), rows(verifier));
    assert.deepEqual(panel.claims[0].where?.[0], { source: `private/runs/${latest}`, line: 2 });
    assert.deepEqual(panel.claims[2].where, [{ source: 'workspace/results/diagrams.json', line: 2 }]);
  });
});

describe('claims: verify --check on a real run (Docker, the compiled CLI)', function () {
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

  it('"a 97.4% reduction" computed from two printed numbers passes --check (exit 0); an invented number fails it (exit 3)', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-derived-'));
    const root = path.join(dir, 's');
    const prep = await cli('prepare', 'sample/toycal/0', '--out', root, '--cache', path.join(dir, 'cache'));
    assert.equal(prep.code, 0, prep.stderr);
    const layout = new SessionLayout(root);
    fs.writeFileSync(layout.script, '#!/usr/bin/env bash\nset -euo pipefail\npython3 -c "print(\'ECE before = %.4f\' % 0.114); print(\'ECE after = %.4f\' % 0.003)"\n');
    const answers = path.join(dir, 'answers.json');
    const write = (conclusion: string) => fs.writeFileSync(answers, JSON.stringify({ design: ['Dependent: ECE'], conclusion }));
    write('The ECE fell from 0.1140 to 0.0030, a 97.4% reduction.');
    const sub = await cli('session', 'submit', root, '--answers', answers, '--no-verify', '--no-judge');
    assert.equal(sub.code, 0, sub.stderr);
    const ok = await cli('verify', root, '--json', '--check', '--timeout', '120');
    const r = JSON.parse(ok.stdout) as VerificationRecord;
    assert.equal(r.E_clean, true, JSON.stringify(r.error ?? r.exitCode));
    assert.deepEqual(r.E_claims.claims.map((c) => [c.text, c.status]), [['0.1140', 'found'], ['0.0030', 'found'], ['97.4%', 'derived']]);
    assert.equal(ok.code, 0, ok.stderr);

    fs.writeFileSync(layout.answers, JSON.stringify({ design: ['Dependent: ECE'], conclusion: 'The ECE fell from 0.1140 to 0.0030, a 95.1% reduction.' }));
    const bad = await cli('verify', root, '--json', '--check', '--timeout', '120');
    assert.equal(bad.code, 3, bad.stderr);
    assert.deepEqual((JSON.parse(bad.stdout) as VerificationRecord).E_claims.claims.map((c) => [c.text, c.status]), [['0.1140', 'found'], ['0.0030', 'found'], ['95.1%', 'not found']]);
  });
});
