/**
 * Held-back variants of issue 33's two classes, written after the rules were done (not the issue's
 * own inputs, not used to tune them): derived claims over sweeps, grids, ablations and training
 * logs in other print formats, and short expected numbers leaked in other kinds of kept files.
 * Each row says what the rule should say; the test reports every row that differs at once.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { lintTasks } from '../../src/core/curation/lint';
import { git } from '../../src/core/git';
import { checkClaims } from '../../src/core/verify/claims';

interface DerivedCase { name: string; run: string; conclusion: string; claim: string; want: 'derived' | 'not found' }

const DERIVED: DerivedCase[] = [
  { name: 'JSON lines of a sweep', run: '{"n_train": 500, "test_mae": 0.212}\n{"n_train": 2000, "test_mae": 0.087}\n{"n_train": 8000, "test_mae": 0.031}\n',
    conclusion: 'The test MAE drops from 0.212 with 500 training points to 0.031 with 8000, an 85.4% reduction.', claim: '85.4%', want: 'derived' },
  { name: 'bracketed learning rate, "val acc:"', run: '[lr=0.1] val acc: 0.812\n[lr=0.01] val acc: 0.851\n[lr=0.001] val acc: 0.874\n',
    conclusion: 'Validation accuracy improves from 0.812 to 0.874, a 7.6% relative increase.', claim: '7.6%', want: 'derived' },
  { name: 'training log with ppl, a ratio', run: 'epoch 1 | loss 2.3026 | ppl 10.00\nepoch 10 | loss 1.0986 | ppl 3.00\nepoch 20 | loss 0.6931 | ppl 2.00\n',
    conclusion: 'Perplexity falls from 10.00 to 2.00 over training, a 5.0x improvement.', claim: '5.0x', want: 'derived' },
  { name: 'ablation by model, a difference in points', run: 'model=base bleu=27.3\nmodel=large bleu=29.1\n',
    conclusion: 'BLEU rises by 1.8 points from 27.3 to 29.1 with the large model.', claim: '1.8', want: 'derived' },
  { name: 'keys with spaces, top-1 in percent, pp', run: 'batch size: 32, top-1 accuracy: 71.2%\nbatch size: 256, top-1 accuracy: 74.9%\n',
    conclusion: 'Top-1 accuracy improves from 71.2% to 74.9% with the larger batch, a gain of 3.7 pp.', claim: '3.7 pp', want: 'derived' },
  { name: 'seeds compared, the sentence names them', run: 'seed=0 reward=120.5\nseed=1 reward=98.2\n',
    conclusion: 'Reward drops from 120.5 with seed 0 to 98.2 with seed 1, an 18.5% decrease.', claim: '18.5%', want: 'derived' },
  { name: 'unicode arrow, "calibration error" for ECE', run: 'ECE (val): 0.0843 → 0.0121\n',
    conclusion: 'The calibration error falls from 0.0843 to 0.0121 after scaling, an 85.6% reduction.', claim: '85.6%', want: 'derived' },
  { name: 'upper-case MAE by horizon, "mean absolute error"', run: 'horizon=96 MAE=0.3907\nhorizon=336 MAE=0.4311\nhorizon=720 MAE=0.4550\n',
    conclusion: 'The mean absolute error grows from 0.3907 at horizon 96 to 0.4550 at horizon 720, a 16.5% increase.', claim: '16.5%', want: 'derived' },
  { name: 'replicates: two seeds, the sentence does not name them', run: 'seed=1 acc=0.801\nseed=2 acc=0.799\n',
    conclusion: 'Accuracy went from 0.801 to 0.799, a 0.2% drop.', claim: '0.2%', want: 'not found' },
  { name: 'replicates: only another measured value differs', run: 'mse:0.3774, mae:0.3907\nmse:0.3791, mae:0.3919\n',
    conclusion: 'The MSE increases from 0.3774 to 0.3791, a 0.5% increase.', claim: '0.5%', want: 'not found' },
  { name: 'two error metrics are two quantities', run: 'n=100 mae=0.1563 rmse=0.2010\n',
    conclusion: 'The error falls from 0.2010 to 0.1563, a 22.2% reduction.', claim: '22.2%', want: 'not found' },
  { name: 'a wrong change of a real sweep', run: 'depth=2 auc=0.701\ndepth=8 auc=0.812\n',
    conclusion: 'AUROC rises from 0.701 at depth 2 to 0.812 at depth 8, a 17.3% increase.', claim: '17.3%', want: 'not found' },
  // added later, after the camelCase fix of the leak rule (not used to tune either rule)
  { name: 'capitalised "Epoch N:" prefix, snake_case val_loss', run: 'Epoch 5: val_loss=0.912\nEpoch 50: val_loss=0.301\n',
    conclusion: 'Validation loss decreases from 0.912 at epoch 5 to 0.301 at epoch 50, by 67.0%.', claim: '67.0%', want: 'derived' },
  { name: 'the change without its two values (sourcesStated, docs/claims.md)', run: 'Epoch 5: val_loss=0.912\nEpoch 50: val_loss=0.301\n',
    conclusion: 'Validation loss decreases by 67.0% between epoch 5 and epoch 50.', claim: '67.0%', want: 'not found' },
  { name: 'beam sweep of WER in percent, a difference in points', run: 'beam=1 WER 12.4%\nbeam=8 WER 10.1%\n',
    conclusion: 'The word error rate falls by 2.3 points, from 12.4% with beam 1 to 10.1% with beam 8.', claim: '2.3', want: 'derived' },
  { name: 'a wrong reduction of a beam sweep', run: 'beam=1 WER 12.4%\nbeam=8 WER 10.1%\n',
    conclusion: 'The word error rate falls from 12.4% to 10.1%, a 25.0% reduction.', claim: '25.0%', want: 'not found' },
];

interface LeakCase { name: string; files: Record<string, string>; outcome: string; method?: string; want: string[] }

const LEAKS: LeakCase[] = [
  { name: 'percentages written as fractions in a notes file', files: { 'docs/NOTES.txt': 'baseline ~0.62, finetuned ~0.71 (acc)\n' },
    outcome: 'Accuracy should improve from roughly 62% to 71% when fine-tuning.', want: ['62%', '71%'] },
  { name: 'a factor and a fraction on adjacent lines', files: { 'summary.md': '# Summary\nspeedup: 2x\nmemory ratio: 0.5\n' },
    outcome: 'The method is about 2x faster than the baseline and uses 0.5 of the memory.', want: ['2x', '0.5'] },
  { name: 'one number with two context words (camelCase name)', files: { 'logs/eval.log': 'WikiText perplexity: 4.2\n' },
    outcome: 'Perplexity drops to about 4.2 on WikiText.', want: ['4.2'] },
  { name: 'one number with two context words (one lower-case word)', files: { 'logs/eval.log': 'wikitext perplexity: 4.2\n' },
    outcome: 'Perplexity drops to about 4.2 on WikiText.', want: ['4.2'] },
  { name: 'a comment of code', files: { 'defense.py': 'import os\n# expected: ASR < 5% and the CA drop ~0.9%\nprint(os.name)\n' },
    outcome: 'The defense keeps the ASR below 5% with a CA drop of around 0.9%.', want: ['5%', '0.9%'] },
  { name: 'a notebook\'s output', files: { 'demo.ipynb': '{\n "cells": [{"outputs": [{"text": ["final mae 0.16 (n=100) ... 0.004 (n=100000)\\n"]}]}]\n}\n' },
    outcome: 'The MAE falls from about 0.16 at n=100 to 0.004 at n=100000.', want: ['0.16', '0.004'] },
  { name: 'no leak: literals of code', files: { 'config.py': 'lr = 0.1\nwarmup = 0.05\n' },
    outcome: 'Accuracy improves by 10% with warm-up and 5% without.', want: [] },
  { name: 'no leak: the two numbers far apart, no context', files: { 'notes.md': 'a 0.62\n\n\n\n\n\n\n\nb 0.71\n' },
    outcome: 'Accuracy should improve from roughly 62% to 71% when fine-tuning.', want: [] },
  { name: 'no leak: the brief states them', files: { 'notes.md': 'baseline ~0.62, finetuned ~0.71\n' },
    outcome: 'Accuracy should improve from roughly 62% to 71% when fine-tuning.', method: 'Fine-tune; the paper reports 62% before and 71% after.', want: [] },
  { name: 'no leak: a table of values', files: { 'data/iris.csv': '0.62,0.71,1.4,0.2\n' },
    outcome: 'Accuracy should improve from roughly 62% to 71% when fine-tuning.', want: [] },
  // added later, after the camelCase fix (not used to tune the rule)
  { name: 'a markdown table of results in a sub-folder', files: { 'docs/RESULTS.md': '| method | acc |\n| --- | --- |\n| baseline | 0.80 |\n| ours | 0.87 |\n' },
    outcome: 'Accuracy should reach about 87%, against 80% for the baseline.', want: ['80%', '87%'] },
  { name: 'a LaTeX draft of the paper', files: { 'paper/main.tex': 'Our method reaches 0.93 AUC, against 0.88 for the strongest baseline.\n' },
    outcome: 'The AUC should be about 0.93, above the baseline\'s 0.88.', want: ['0.88', '0.93'] },
  { name: 'no leak: a factor printed as a plain number', files: { 'notes.txt': 'speed of the loader: 2.0 s per batch\n' },
    outcome: 'The new loader should be about 2x faster than the old one.', want: [] },
];

describe('issue 33 held-back variants (written after the rules)', function () {
  this.timeout(300_000);
  let dir: string;
  before(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-heldback-')); });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it(`derived claims: ${DERIVED.length} variants of sweeps, grids, ablations and logs`, () => {
    const wrong = DERIVED.map((c) => {
      const got = checkClaims(c.conclusion, [{ source: 'stdout', text: c.run }]).claims.find((x) => x.text === c.claim)?.status ?? 'no such claim';
      return got === c.want ? undefined : `${c.name}: ${c.claim} is ${got}, wanted ${c.want}`;
    }).filter(Boolean);
    assert.deepEqual(wrong, []);
  });

  it(`short leaked numbers: ${LEAKS.length} variants of kept files`, async () => {
    const wrong: string[] = [];
    for (const [i, c] of LEAKS.entries()) {
      const repo = path.join(dir, `repo${i}`);
      for (const [f, body] of Object.entries({ 'train.py': 'def train():\n    pass\n', ...c.files })) {
        await fsp.mkdir(path.dirname(path.join(repo, f)), { recursive: true });
        await fsp.writeFile(path.join(repo, f), body);
      }
      await git(['init', '-q', '-b', 'main'], { repo: 'none', cwd: repo });
      await git(['add', '-A'], { repo: { checkout: repo } });
      await git(['-c', 'user.name=t', '-c', 'user.email=t@localhost', 'commit', '-q', '-m', 'c'], { repo: { checkout: repo } });
      const ds = path.join(dir, `ds${i}`, 'tasks', 'conf', '7');
      await fsp.mkdir(ds, { recursive: true });
      await fsp.writeFile(path.join(ds, '7_complete_final.json'), JSON.stringify({ questions: [{
        question: 'Does it help?', method: c.method ?? 'train', expected_outcome: c.outcome, agent_instructions: 'go', usage_instructions: 'python train.py',
        design_complexity: { independent_variables: { lr: [0.1] } }, masked_source: ['/workspace/train.py'], source: ['/workspace/train.py'], requirements: ['Step 1 (/workspace/train.py:1)'],
      }] }));
      const r = await lintTasks({ inputs: [path.join(dir, `ds${i}`)], source: repo, cacheDir: path.join(dir, 'cache') });
      const got = r.findings.filter((f) => f.rule === 'leak-expected-number').map((f) => /^expected_outcome's "([^"]+)"/.exec(f.message)?.[1] ?? f.message).sort();
      if (JSON.stringify(got) !== JSON.stringify([...c.want].sort())) wrong.push(`${c.name}: ${JSON.stringify(got)}, wanted ${JSON.stringify(c.want)}`);
    }
    assert.deepEqual(wrong, []);
  });
});
