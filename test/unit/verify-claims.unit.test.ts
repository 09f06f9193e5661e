/**
 * The verifier's pure parts: the claims check (extraction rules and rounding tolerance), the
 * script lint, and the capped log store (real files in a temporary folder).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkClaims, extractClaims, matchesClaim } from '../../src/core/verify/claims';
import { producedNumbers } from '../../src/core/verify/produced';
import { lintScript } from '../../src/core/verify/lint';
import { LineSplitter, MAX_LINE_CHARS, readLogText, RunLogs } from '../../src/core/verify/logs';
import { VerificationRecordSchema } from '../../src/core/verify/record';

const texts = (conclusion: string) => extractClaims(conclusion).map((c) => c.text);

describe('verify: claims extraction', () => {
  it('finds decimals, percentages, factors, exponents, signed numbers, thousands and unit words', () => {
    assert.deepEqual(
      texts('Accuracy rose from 0.71 to 0.93 (71.2% vs 93%), 3.5x faster, ECE 1e-3, loss -0.25 ± 0.01, 12,345 samples, 120 ms per step.'),
      ['0.71', '0.93', '71.2%', '93%', '3.5x', '1e-3', '-0.25', '0.01', '12,345', '120 ms'],
    );
    const c = extractClaims('a 71.2% gain')[0];
    assert.equal(c.value, 71.2);
    assert.equal(c.unit, '%');
    assert.equal(extractClaims('ECE 2.5E-4.')[0].value, 0.00025);
  });

  it('ignores list markers, names with numbers, references, citations, years and small counts', () => {
    assert.deepEqual(texts('1. On CIFAR-10 with ResNet-50 and GPT-4 (v2), see Table 2, Figure 3, Eq. 4 and Section 5 [12].\n2) In 2024 we used 5 seeds, a 2D grid, the 3rd run.\n3. Result: 0.93.'), ['0.93']);
  });

  it('a dash between numbers is a range, not a minus sign', () => {
    assert.deepEqual(extractClaims('between 0.9-0.95').map((c) => c.value), [0.9, 0.95]);
  });

  it('keeps the conclusion context around each claim', () => {
    const [c] = extractClaims('After tuning, the smoothed calibration error reaches 0.0312 on the held-out split of the data.');
    assert.match(c.context, /calibration error reaches 0\.0312 on the held-out/);
  });
});

describe('verify: claims matching', () => {
  const claim = (text: string) => extractClaims(text)[0];
  const printed = (v: number, unit?: string) => ({ value: v, unit });

  it('rounds to the claim\'s own precision: 0.93 matches 0.9312 and 0.925, not 0.9351 nor 0.71', () => {
    assert.equal(matchesClaim(claim('0.93'), printed(0.9312)), true);
    assert.equal(matchesClaim(claim('0.93'), printed(0.925)), true);
    assert.equal(matchesClaim(claim('0.93'), printed(0.9351)), false);
    assert.equal(matchesClaim(claim('0.93'), printed(0.71)), false);
  });

  it('a claim more precise than the output is not found (0.9312 vs a printed 0.93)', () => {
    assert.equal(matchesClaim(claim('0.9312'), printed(0.93)), false);
  });

  it('percentages match both scales', () => {
    assert.equal(matchesClaim(claim('93%'), printed(0.93)), true);
    assert.equal(matchesClaim(claim('93%'), printed(93.0)), true);
    assert.equal(matchesClaim(claim('93%'), printed(0.9312)), true);
    assert.equal(matchesClaim(claim('71.2%'), printed(0.7119)), true);
    assert.equal(matchesClaim(claim('71.2%'), printed(0.7131)), false);
    assert.equal(matchesClaim(claim('0.93'), printed(93.1, '%')), true);
  });

  it('exponents set the precision: 1e-3 matches 0.0012, not 0.002', () => {
    assert.equal(matchesClaim(claim('1e-3'), printed(0.0012)), true);
    assert.equal(matchesClaim(claim('1e-3'), printed(0.002)), false);
  });

  it('checkClaims reports every place found (source and 1-based line) and allFound', () => {
    const r = checkClaims('We report 0.93 accuracy and 12.5 loss, 93% overall.', [
      { source: 'stdout', text: 'epoch 1\nacc=0.9312 loss=3.2\n' },
      { source: 'results/metrics.csv', text: 'metric,value\naccuracy,0.93\n' },
    ]);
    assert.deepEqual(r.claims.map((c) => [c.text, c.found, c.where]), [
      ['0.93', true, [{ source: 'stdout', line: 2 }, { source: 'results/metrics.csv', line: 2 }]],
      ['12.5', false, undefined],
      ['93%', true, [{ source: 'stdout', line: 2 }, { source: 'results/metrics.csv', line: 2 }]],
    ]);
    assert.equal(r.allFound, false);
    assert.equal(checkClaims('no numbers here', []).allFound, true);
  });
});

describe('verify: produced numbers skip terminal noise', () => {
  const values = (text: string) => producedNumbers('stderr', text).map((n) => n.text);

  it('strips ANSI colour codes before reading numbers: 0;31 of \\x1b[0;31m is not a number, lines and labels are kept', () => {
    const text = '\x1b[0;31mERROR\x1b[0m step failed\n\x1b[1;32mECE after scaling = 0.0123\x1b[0m\n';
    const ns = producedNumbers('stdout', text);
    assert.deepEqual(ns.map((n) => [n.text, n.line, n.label]), [['0.0123', 2, 'ECE after scaling']]);
    assert.deepEqual(values('\x1b[38;5;196mred\x1b[0m'), []);
  });

  it('a claim is not found in colour codes alone (the 31 of \\x1b[0;31m)', () => {
    const r = checkClaims('The error fell by 31%.', [{ source: 'stderr', text: '\x1b[0;31mTraceback (most recent call last):\x1b[0m\n' }]);
    assert.deepEqual(r.claims.map((c) => [c.text, c.status]), [['31%', 'not found']]);
  });

  it('does not read environment-variable assignments: the =1 of PYDEVD_DISABLE_FILE_VALIDATION=1 is not a "1.0" found', () => {
    const stderr = 'Debugger warning: took 2.5 s; set PYDEVD_DISABLE_FILE_VALIDATION=1 to disable this validation.\n' +
      'Traceback (most recent call last):\nModuleNotFoundError: No module named \'jax\'\n';
    assert.deepEqual(values(stderr), ['2.5 s']);
    const r = checkClaims('The loss is converging to 1.0.', [{ source: 'stderr', text: stderr }]);
    assert.deepEqual(r.claims.map((c) => [c.text, c.status]), [['1.0', 'not found']]);
    assert.deepEqual(values('CUDA_VISIBLE_DEVICES=0,1 OMP_NUM_THREADS=4 PYTHONHASHSEED=0'), []);
    assert.deepEqual(values('export lr=3 && env batch=64 python train.py'), []);
  });

  it('keeps values of labels that look like assignments: ECE=0.0123, acc=0.93, lr=0.001', () => {
    assert.deepEqual(values('ECE=0.0123 acc=0.93, lr=0.001 N=1000'), ['0.0123', '0.93', '0.001', '1000']);
    assert.deepEqual(values('accuracy:0.905 loss: 3'), ['0.905', '3']);
  });

  it('does not read identifiers: cuda:0, localhost:8080, x86_64, sm_80', () => {
    assert.deepEqual(values('device cuda:0 on localhost:8080, arch x86_64 sm_80'), []);
    const r = checkClaims('We reach 80% of the peak.', [{ source: 'stdout', text: 'Using device cuda:0 (sm_80) on x86_64\n' }]);
    assert.deepEqual(r.claims.map((c) => [c.text, c.status]), [['80%', 'not found']]);
  });
});

describe('verify: script lint', () => {
  const rules = (s: string | undefined) => lintScript(s).map((f) => [f.severity, f.rule, f.line]);

  it('flags a missing and an empty script', () => {
    assert.deepEqual(rules(undefined), [['warning', 'script-missing', undefined]]);
    assert.deepEqual(rules('#!/bin/bash\n# nothing yet\n\n'), [['warning', 'script-empty', undefined]]);
  });

  it('flags scripts that only echo, printf or cat numbers', () => {
    assert.deepEqual(rules('#!/bin/bash\necho "running..."\necho "accuracy: 0.93"\n'), [['warning', 'echo-only', 3]]);
    assert.deepEqual(rules('#!/bin/bash\nprintf "%s\\n" 71.2\n'), [['warning', 'echo-only', 2]]);
    assert.deepEqual(rules('#!/bin/bash\ncat <<EOF\nacc 0.93\nEOF\n'), [['warning', 'echo-only', 2]]);
    assert.deepEqual(rules('#!/bin/bash\nset -e\ncat results/precomputed.txt\n'), [['warning', 'echo-only', 3]]);
  });

  it('flags exit 0 only', () => {
    assert.deepEqual(rules('#!/bin/bash\nexit 0\n'), [['warning', 'exit-only', 2]]);
  });

  it('accepts scripts that run programs, including inside $(…), pipes and heredocs', () => {
    assert.deepEqual(rules('#!/bin/bash\nset -euo pipefail\ncd "$(dirname "$0")"\nPYTHONPATH=src python3 train.py --seed 1\necho done 0.93\n'), []);
    assert.deepEqual(rules('#!/bin/bash\necho "acc $(python3 eval.py)"\n'), []);
    assert.deepEqual(rules('#!/bin/bash\npython3 - <<PY\nprint(0.93)\nPY\n'), []);
    assert.deepEqual(rules('#!/bin/bash\nfor s in 1 2 3; do\n  ./run.sh $s | tee log.txt\ndone\n'), []);
  });
});

describe('verify: capped logs', () => {
  let dir: string;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-vlogs-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps the head and the tail within the cap and marks the cut; line N of the text is line N of the file', async () => {
    const paths = { stdout: path.join(dir, 'o.log'), stderr: path.join(dir, 'e.log'), combined: path.join(dir, 'c.log') };
    const cap = 4096;
    const seen: string[] = [];
    const logs = new RunLogs(paths, cap, (l) => seen.push(l.text));
    await logs.open();
    for (let i = 1; i <= 2000; i++) logs.add({ stream: i % 10 === 0 ? 'stderr' : 'stdout', time: '2026-11-29T08:00:00.000Z', text: `line ${i}` });
    await logs.close();
    assert.equal(seen.length, 2000);
    assert.equal(logs.truncated, true);
    for (const f of Object.values(paths)) {
      const raw = fs.readFileSync(f, 'utf8');
      assert.ok(Buffer.byteLength(raw) <= cap + 200, `${f}: ${Buffer.byteLength(raw)} bytes`);
      assert.match(raw, /cut here: stored-log cap of 4096 bytes/);
    }
    const text = (await readLogText(paths.stdout)).split('\n');
    assert.equal(text[0], 'line 1');
    assert.equal(text.filter((l) => l !== '').at(-1), 'line 1999');
    assert.match(fs.readFileSync(paths.combined, 'utf8'), /Z \[stderr\] line 2000\n$/);
  });

  it('splits UTF-8 across chunks and bounds very long lines', () => {
    const out: string[] = [];
    const s = new LineSplitter((t) => out.push(t));
    const bytes = Buffer.from('é1\r\nab');
    s.write(bytes.subarray(0, 1));
    s.write(bytes.subarray(1));
    s.write(Buffer.from('c\n' + 'x'.repeat(MAX_LINE_CHARS + 10)));
    s.end();
    assert.deepEqual(out.map((l) => l.length), [2, 3, MAX_LINE_CHARS, 10]);
    assert.equal(out[0], 'é1');
  });
});

describe('verify: record schema', () => {
  it('rejects a record without its signals', () => {
    const r = VerificationRecordSchema.safeParse({ version: 1, runId: 'x', status: 'finished', mode: 'clean' });
    assert.equal(r.success, false);
  });
});
