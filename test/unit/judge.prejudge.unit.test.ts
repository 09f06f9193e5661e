import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { designVariables } from '../../src/core/judge/common';
import { designItems, matchDesign } from '../../src/core/judge/designMatch';
import { judgeHeuristic } from '../../src/core/judge/heuristic';
import { gitPristine } from '../../src/core/judge/pristine';
import { JudgeRecord } from '../../src/core/judge/types';
import type { Task } from '../../src/core/tasks/types';
import { notebookAsText, parseNotebook, resolveNotebookRange, scriptExport } from '../../src/core/util/notebook';
import { folderPristine, labelTasks, mirror, newFilePatch, precision, readLabels, recall, ROOT, scoreLabels } from '../harness/prejudgeLabels';

const DATA = path.join(ROOT, 'test', 'data', 'prejudge');

async function task(id: string): Promise<Task | undefined> {
  return (await labelTasks()).find((t) => t.id === id);
}

describe('judge: pre-judge that does not flatter (issue 14, item 5)', function () {
  this.timeout(60_000);

  describe('design roles', () => {
    it('never matches a variable to an item of another stated role, and says why', async () => {
      const t = (await task('sample/toycal/0'))!;
      const items = designItems(['Constant: ece_bins — 15', 'Independent: temperature scaling — on (T fitted on validation NLL) or off', 'Constant: seed — 0']);
      const { verdicts } = matchDesign(designVariables(t), items);
      const by = Object.fromEntries(verdicts.map((v) => [v.variable, v]));
      assert.equal(by.ece.verdict, 'missing', by.ece.reason); // "ece" (dependent) is not the constant "ece_bins"
      assert.equal(by.temperature.verdict, 'missing', by.temperature.reason); // dependent T vs an independent item
      assert.match(by.temperature.reason, /stated as independent, the variable is dependent/);
      assert.equal(by.calibration.verdict, 'matched');
      assert.match(by.calibration.reason, /stated as independent \(its label\), as the variable/);
      assert.equal(by.ece_binning.verdict, 'matched');
    });

    it('reads roles from headings of free text and says when the design states none', async () => {
      const items = designItems(['### Independent Variables\n1. **Simulation Method**:\n   - MDGEN\n   - MD\n### Dependent Variables\n- Wall-clock time\n\n### Setup\n- GPUs: A6000']);
      assert.deepEqual(items.map((i) => [i.role, i.text]), [
        ['independent', 'Simulation Method: MDGEN; MD'], ['dependent', 'Wall-clock time'], [null, 'GPUs: A6000'],
      ]);
      const t = (await task('sample/toycal/0'))!;
      const r = await judgeHeuristic({ task: t, answers: { design: 'test ECE and accuracy\nfitted temperature', conclusion: '' }, patch: '', maskedPaths: [] });
      assert.ok(r.notes.some((n) => /states no roles/.test(n)), r.notes.join('\n'));
      assert.ok(r.design.verdicts.filter((v) => v.verdict !== 'missing').every((v) => /role not stated in the design/.test(v.reason)));
    });
  });

  describe('requirement coverage by content', () => {
    it('credits a correct solution in a new file with other local names (z vs test_logits), citing where', async () => {
      const t = (await task('sample/toycal/0'))!;
      const text = await fsp.readFile(path.join(DATA, 'toycal_renamed.py'), 'utf8');
      const r = await judgeHeuristic({ task: t, patch: newFilePatch('solve_tc.py', text), maskedPaths: [], pristine: folderPristine(path.join(ROOT, 'samples', 'repos', 'toy-calibration')) });
      JudgeRecord.parse(r);
      assert.deepEqual(r.implementation.verdicts.map((v) => v.verdict), ['met', 'met', 'met', 'met', 'met', 'met'], r.implementation.verdicts.map((v) => v.reason).join('\n'));
      for (const v of r.implementation.verdicts) {
        assert.doesNotMatch(v.reason, /reference files? (not )?touched|changes the reference file/);
        assert.match(v.reason, /in solve_tc\.py \(lines [\d, -]+\)/);
        assert.ok(v.anchors!.length > 0 && v.anchors!.every((a) => a.path === 'solve_tc.py'));
        assert.ok(v.hunks.length > 0);
      }
      // the stub (trains and prints accuracy only) is not credited with the temperature fit
      const stub = await fsp.readFile(path.join(DATA, 'toycal_stub.py'), 'utf8');
      const s = await judgeHeuristic({ task: t, patch: newFilePatch('attempt.py', stub), maskedPaths: [], pristine: folderPristine(path.join(ROOT, 'samples', 'repos', 'toy-calibration')) });
      assert.equal(s.implementation.verdicts[1].verdict, 'unmet', s.implementation.verdicts[1].reason);
      assert.match(s.implementation.verdicts[1].reason, /not found: .*nll\(\)/);
      assert.ok(s.implementation.score! < 0.5);
    });
  });

  describe('notebooks', () => {
    it('maps both readings of EXP-Bench references onto cells, and shows cells, not JSON', async () => {
      const text = await fsp.readFile(path.join(DATA, 'synthetic.ipynb'), 'utf8');
      const nb = parseNotebook(text, 'synthetic.ipynb');
      assert.deepEqual(nb.cells.map((c) => c.cellType), ['markdown', 'code', 'code']);
      // the script export (nbconvert 6.5 layout, checked against `jupyter nbconvert --to script`)
      const script = scriptExport(nb).map((l) => l.text);
      assert.equal(script[17], "print('ece:', rp.smECE(f, y))"); // line 18
      assert.equal(script[23], 'rp.rel_diagram_binned(f, y, nbins=12)'); // line 24
      // line 18 of the raw JSON is inside an output: the script reading is used
      const a = resolveNotebookRange(nb, 18, 18)!;
      assert.equal(a.reading, 'script-export');
      assert.deepEqual(a.spans, [{ cell: 1, startLine: 9, endLine: 9 }]);
      // line 35 of the raw JSON is a source string of cell 1: the raw reading is used
      const b = resolveNotebookRange(nb, 35, 35)!;
      assert.equal(b.reading, 'raw-json');
      assert.equal(b.text, "print('ece:', rp.smECE(f, y))");
      assert.deepEqual(resolveNotebookRange(nb, 1, 1, 2)!.spans, [{ cell: 2, startLine: 1, endLine: 1 }]);
      const shown = notebookAsText(nb);
      assert.match(shown, /^# %% \[cell 1\] code \(In\[1\]\)\n%matplotlib inline/m);
      assert.doesNotMatch(shown, /"output_type"|"cell_type"/);
      assert.throws(() => parseNotebook('{"nbformat": 4}', 'bad.ipynb'), (e: unknown) => isExpBenchError(e) && /bad\.ipynb: not a Jupyter notebook/.test((e as Error).message));
    });

    it('credits a new script by content against a notebook ground truth, the cells as evidence (synthetic, always runs)', async () => {
      const base = (await task('iclr2024/18439/1')) ?? (await task('sample/toycal/0'))!;
      const nbText = await fsp.readFile(path.join(DATA, 'synthetic.ipynb'), 'utf8');
      const t: Task = {
        ...base, id: 'synthetic/nb/0', type: 1,
        requirements: [
          { text: 'Step 1: Configure relplot not to use TeX fonts (/workspace/demo.ipynb:13)', refs: [{ path: 'demo.ipynb', startLine: 13, endLine: 13 }] },
          { text: 'Step 2: Draw N = 5000 predictions uniformly (/workspace/demo.ipynb:15-16)', refs: [{ path: 'demo.ipynb', startLine: 15, endLine: 16 }] },
          { text: 'Step 3: Print the smECE (/workspace/demo.ipynb:35)', refs: [{ path: 'demo.ipynb', startLine: 35, endLine: 35 }] },
          { text: 'Step 4: Binned diagram with 12 bins (/workspace/demo.ipynb:24)', refs: [{ path: 'demo.ipynb', startLine: 24, endLine: 24 }] },
        ],
      };
      const solver = ['import numpy as np', 'import relplot', 'relplot.config.use_tex_fonts = False', 'count = 5000', 'preds = np.random.rand(count)',
        'labels = (np.random.rand(count) < preds) * 1', 'print("smECE", relplot.smECE(preds, labels))', 'relplot.rel_diagram_binned(preds, labels, nbins=12)'].join('\n');
      const pristine = { describe: 'synthetic', read: async (p: string) => (p === 'demo.ipynb' ? nbText : undefined) };
      const r = await judgeHeuristic({ task: t, patch: newFilePatch('run_demo.py', solver), maskedPaths: [], pristine });
      assert.deepEqual(r.implementation.verdicts.map((v) => v.verdict), ['met', 'met', 'met', 'met'], r.implementation.verdicts.map((v) => v.reason).join('\n'));
      const v3 = r.implementation.verdicts[2];
      assert.deepEqual(v3.groundTruth, [{ path: 'demo.ipynb', startLine: 35, endLine: 35, cells: [{ cell: 1, startLine: 9, endLine: 9 }], reading: 'raw-json' }]);
      assert.deepEqual(v3.groundTruthCode, [{ path: 'demo.ipynb', label: 'demo.ipynb cell 1 line 9', text: "print('ece:', rp.smECE(f, y))" }]);
      assert.match(v3.reason, /of demo\.ipynb cell 1 line 9 .*found \d+ \(.*smece\(\)/);
      assert.deepEqual(r.implementation.verdicts[3].anchors, [{ path: 'run_demo.py', startLine: 8, endLine: 8, symbols: ['rel_diagram_binned()', 'nbins=', '12'] }]);
      for (const v of r.implementation.verdicts) for (const g of v.groundTruthCode!) assert.doesNotMatch(g.text, /"source"|"output_type"/);
    });

    it('iclr2024/18439/1 with apple/ml-calibration fetched: a new script covering the seven steps is credited, cells as evidence', async function () {
      const repo = await mirror('apple/ml-calibration');
      const t = await task('iclr2024/18439/1');
      if (!repo || !t) {
        console.log(`      skipped: ${!repo ? 'apple/ml-calibration is not fetched (../.mirror/apple+ml-calibration/repo beside the repository, or EXPBENCH_MIRRORS)' : 'the shared dataset (../shared/data/exp-bench) is not here'}`);
        this.skip();
      }
      const solver = await fsp.readFile(path.join(DATA, 'relplot_compare.py'), 'utf8');
      const r = await judgeHeuristic({ task: t!, patch: newFilePatch('compare.py', solver), maskedPaths: [], pristine: gitPristine(repo!, 'HEAD') });
      const vs = r.implementation.verdicts;
      assert.deepEqual(vs.map((v) => v.verdict), ['met', 'met', 'met', 'met', 'met', 'met', 'met'], vs.map((v) => v.reason).join('\n'));
      assert.equal(r.implementation.score, 1);
      assert.deepEqual(vs[1].groundTruth[0].cells, [{ cell: 0, startLine: 5, endLine: 5 }]); // demo.ipynb:11 = use_tex_fonts
      assert.equal(vs[1].groundTruth[0].reading, 'script-export');
      assert.match(vs[1].groundTruthCode![0].text, /^rp\.config\.use_tex_fonts = False/);
      assert.match(vs[4].groundTruthCode![0].text, /rp\.smECE\(f, y\)/);
      for (const v of vs) assert.doesNotMatch(v.groundTruthCode!.map((g) => g.text).join('\n'), /"output_type"|"image\/png"/);
    });
  });

  describe('hand labels (test/data/prejudge-labels.json)', () => {
    it('has ≥ 40 design and ≥ 20 requirement pairs, a third held out; held-out precision and recall', async () => {
      const labels = await readLabels();
      assert.ok(labels.design.length >= 40 && labels.requirements.length >= 20);
      for (const list of [labels.design, labels.requirements]) assert.equal(list.filter((p) => p.heldOut).length, Math.floor(list.length / 3));
      const s = await scoreLabels(labels);
      const d = s.design.heldOut;
      const q = s.requirements.heldOut;
      console.log(`      held-out design pairs: n=${d.n} P=${precision(d).toFixed(2)} R=${recall(d).toFixed(2)} (unavailable ${d.unavailable}); `
        + `requirement pairs (met): n=${q.n} P=${precision(q).toFixed(2)} R=${recall(q).toFixed(2)} (unavailable ${q.unavailable})`);
      // the sample task's pairs are committed, so these always run
      assert.ok(d.n >= 6 && q.n >= 4);
      // floors well under the measured figures (docs/prejudge.md): a regression guard, not a target
      assert.ok(precision(d) >= 0.75 && recall(d) >= 0.75, `design held-out P=${precision(d)} R=${recall(d)}`);
      assert.ok(precision(q) >= 0.75 && recall(q) >= 0.75, `requirements held-out P=${precision(q)} R=${recall(q)}`);
    });
  });
});
