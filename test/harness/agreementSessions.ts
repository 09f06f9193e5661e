import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { judgeStep } from '../../src/core/flows/judge';
import { submitAndScore } from '../../src/core/flows/submit';
import type { JudgeRecord } from '../../src/core/judge/types';
import { SessionLayout } from '../../src/core/layout';
import { bundledDatasetDir } from '../../src/core/paths';
import { writeSessionMarker } from '../../src/core/session/marker';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import { prepareSession } from '../../src/core/workspace/prepare';

/**
 * Four human-like sessions of the sample task `sample/toycal/0` with different answers and
 * patches, for the judge-agreement table (docs/curation.md "Judge agreement"). Each is prepared,
 * filled, submitted and judged by the heuristic pre-judge with the real core functions. The
 * labels of their items (test/data/agreement/) were written from these files alone, before the
 * heuristic judged any of them.
 */
export const SAMPLE_TASK_ID = 'sample/toycal/0';

const REFERENCE = path.join(bundledDatasetDir(), '..', 'solutions', 'toy-calibration');

/** B: fits the temperature only, and adds a Brier score (the gap report's partial session). */
const PARTIAL_CALIBRATE = [
  '"""Fit a temperature on held-out logits (work in progress)."""',
  '',
  '',
  'def fit_temperature(logits, ys, nll):',
  '    grid = [0.5 + 0.05 * i for i in range(91)]',
  '    return min(grid, key=lambda t: nll(logits, ys, t))',
  '',
].join('\n');

/** C: its own implementation: golden-section search on validation NLL, a 10-bin ECE of its own. */
const OWN_IMPLEMENTATION = `"""Temperature scaling, written from the method (own helpers, golden-section search)."""
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from toycal import data, model as toymodel, metrics  # noqa: E402


def golden_min(f, lo, hi, iters=60):
    phi = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _ in range(iters):
        c, d = b - phi * (b - a), a + phi * (b - a)
        if f(c) < f(d):
            b = d
        else:
            a = c
    return (a + b) / 2


def binned_ece(logits, labels, temp=1.0, bins=10):
    counts = [0] * bins
    confs = [0.0] * bins
    hits = [0.0] * bins
    for z, y in zip(logits, labels):
        p = toymodel.sigmoid(z / temp)
        c = max(p, 1 - p)
        k = min(int(c * bins), bins - 1)
        counts[k] += 1
        confs[k] += c
        hits[k] += 1.0 if (p > 0.5) == (y == 1) else 0.0
    return sum(abs(confs[k] - hits[k]) for k in range(bins) if counts[k]) / len(labels)


if __name__ == "__main__":
    train, val, test = data.splits(0)
    clf = toymodel.LogisticRegression().fit(*train)
    val_z = clf.logits(val[0])
    temp = golden_min(lambda t: metrics.nll(val_z, val[1], t), 0.5, 5.0)
    test_z = clf.logits(test[0])
    out = {
        "T": temp,
        "acc": metrics.accuracy(test_z, test[1]),
        "ece_before": binned_ece(test_z, test[1]),
        "ece_after": binned_ece(test_z, test[1], temp),
    }
    os.makedirs("results", exist_ok=True)
    with open("results/ts.json", "w") as fh:
        json.dump(out, fh)
    print(out)
`;

/** D: fits the temperature on the test split and writes numbers it never computed. */
const WRONG = `"""Quick look at calibration."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from toycal.data import splits  # noqa: E402
from toycal.model import LogisticRegression  # noqa: E402

(x_tr, y_tr), _, (x_te, y_te) = splits(0)
m = LogisticRegression().fit(x_tr, y_tr, lr=0.1, epochs=200)
print("accuracy", sum((z > 0) == (y == 1) for z, y in zip(m.logits(x_te), y_te)) / len(y_te))
print("ECE before 0.05, after 0.07")
`;

export interface AgreementVariant {
  /** Short name, the session folder's name. */
  name: string;
  what: string;
  files: Record<string, string>;
  /** Text inserted into toycal/metrics.py before `def ece(` (empty: none). */
  metricsInsert?: string;
  script: string;
  answers: { design: string[]; conclusion: string };
}

const BRIER = `def brier(logits, ys, temperature=1.0):
    """Mean squared error of the predicted probability."""
    return sum((sigmoid(z / temperature) - y) ** 2 for z, y in zip(logits, ys)) / len(ys)


`;

const SCRIPT = (cmd: string) => `#!/usr/bin/env bash\nset -euo pipefail\ncd "$(dirname "$0")"\n${cmd}\n`;

export async function agreementVariants(): Promise<AgreementVariant[]> {
  const refPy = await fsp.readFile(path.join(REFERENCE, 'temperature_scaling.py'), 'utf8');
  const refAnswers = JSON.parse(await fsp.readFile(path.join(REFERENCE, 'answers.json'), 'utf8')) as AgreementVariant['answers'];
  return [
    {
      name: 'A-reference', what: 'the reference solution and answers', files: { 'experiments/temperature_scaling.py': refPy },
      script: SCRIPT('python3 experiments/temperature_scaling.py'), answers: refAnswers,
    },
    {
      name: 'B-partial', what: 'fits the temperature only (no training, no ECE), adds a Brier score; a thin design and a conclusion without numbers',
      files: { 'experiments/calibrate.py': PARTIAL_CALIBRATE }, metricsInsert: BRIER, script: SCRIPT('python3 experiments/calibrate.py'),
      answers: {
        design: [
          'Constant: the toycal dataset',
          'Independent: temperature scaling on or off',
          'Dependent: ECE',
          'Dependent: Brier score',
        ],
        conclusion: 'Temperature scaling makes the classifier better calibrated.',
      },
    },
    {
      name: 'C-own-implementation', what: 'its own script: golden-section search on validation NLL, a 10-bin ECE; design and conclusion say 10 bins',
      files: { 'experiments/ts_golden.py': OWN_IMPLEMENTATION }, script: SCRIPT('python3 experiments/ts_golden.py'),
      answers: {
        design: [
          'Constant: toycal two-blob data with seed 0 (40/500/2000 split)',
          'Constant: logistic regression from toycal/model.py with its default training (lr 0.5, 3000 epochs)',
          'Constant: ECE computed with 10 equal-width bins',
          'Independent: no scaling vs temperature scaling (T fitted by golden-section search on validation NLL)',
          'Dependent: ECE on the test split',
          'Dependent: test accuracy',
        ],
        conclusion: 'Yes. With T = 1.31 fitted on validation data, the 10-bin test ECE falls from about 0.030 to about 0.011 and test accuracy is unchanged at 0.905.',
      },
    },
    {
      name: 'D-wrong', what: 'trains with other settings, never scales, prints made-up ECE numbers; a design about the learning rate; a conclusion that contradicts the expected outcome',
      files: { 'experiments/look.py': WRONG }, script: SCRIPT('python3 experiments/look.py'),
      answers: {
        design: [
          'Independent: learning rate (0.1 vs 0.5)',
          'Constant: 200 training epochs',
          'Dependent: test accuracy',
        ],
        conclusion: 'No. Temperature scaling increased the ECE from 0.05 to 0.07, so it does not help on toycal.',
      },
    },
  ];
}

export interface BuiltSession {
  variant: AgreementVariant;
  root: string;
  record: JudgeRecord;
}

/** Prepares `<parent>/<variant.name>` (must not exist), fills it, submits and judges it (heuristic). */
export async function buildAgreementSession(parent: string, cacheDir: string, variant: AgreementVariant): Promise<BuiltSession> {
  const task = findTask(await loadDatasets([bundledDatasetDir()]), SAMPLE_TASK_ID);
  if (!task?.paper?.localRepo) throw new Error(`${SAMPLE_TASK_ID} (with its local repository) is not in ${bundledDatasetDir()}`);
  const root = path.join(parent, variant.name);
  await prepareSession({ task, source: task.paper.localRepo, outDir: root, cacheDir });
  await writeSessionMarker(root, task);
  const layout = new SessionLayout(root);
  for (const [rel, text] of Object.entries(variant.files)) {
    await fsp.mkdir(path.dirname(path.join(layout.workspace, rel)), { recursive: true });
    await fsp.writeFile(path.join(layout.workspace, rel), text);
  }
  if (variant.metricsInsert) {
    const metrics = path.join(layout.workspace, 'toycal', 'metrics.py');
    const anchor = 'def ece(logits, ys, temperature=1.0, n_bins=15):';
    const text = await fsp.readFile(metrics, 'utf8');
    if (!text.includes(anchor)) throw new Error(`${metrics} has no ${anchor}`);
    await fsp.writeFile(metrics, text.replace(anchor, variant.metricsInsert + anchor));
  }
  await fsp.writeFile(layout.script, variant.script);
  const r = await submitAndScore(layout, variant.answers, { judge: judgeStep({ task }) });
  if (r.judge?.error) throw new Error(`judge failed: ${r.judge.error}`);
  const record = JSON.parse(await fsp.readFile(path.join(layout.judge, 'latest.json'), 'utf8')) as JudgeRecord;
  return { variant, root, record };
}
