import * as assert from 'node:assert/strict';
import { parseRequirementRefs } from '../../src/core/tasks/refs';

/** Real requirement strings from ../shared/data/exp-bench (file named in each case). */
const CASES: Array<[string, string, Array<[string, number | null, number | null]>]> = [
  ['several ranges, path carried over (neurips2024 dbbench)',
    'Step 5: Process and interpret the raw MySQL responses returned from executed queries (/workspace/src/server/tasks/dbbench/__init__.py:27, 110-112)',
    [['src/server/tasks/dbbench/__init__.py', 27, 27], ['src/server/tasks/dbbench/__init__.py', 110, 112]]],
  ['several files',
    'Step 7: Extract the first non-comment line from the generated code (/workspace/run.py:175-177, /workspace/run.py:12-79)',
    [['run.py', 175, 177], ['run.py', 12, 79]]],
  ['paths without /workspace/',
    'Step 1: Set up the environment by importing necessary libraries and initializing random seeds for reproducibility (train.py:1-21, test.py:1-24)',
    [['train.py', 1, 21], ['test.py', 1, 24]]],
  ['whole files',
    'Final Step: run the pipeline that balances helpfulness and safety using the Safe RLHF pipeline (/workspace/scripts/reward-model.sh, /workspace/scripts/cost-model.sh, /workspace/scripts/ppo-lag.sh)',
    [['scripts/reward-model.sh', null, null], ['scripts/cost-model.sh', null, null], ['scripts/ppo-lag.sh', null, null]]],
  ['a field name among the refs',
    'Step 5: Run the model with the mean aggregation method by adding the --add flag before the --des parameter (/workspace/run_longExp.py:46, usage_instructions)',
    [['run_longExp.py', 46, 46]]],
  ['no reference', 'Final Step: Execute the scripts in sequence (preprocess.sh → finetune.sh → generate.sh) to generate optimized molecules and evaluate their properties', []],
  ['prose in parentheses is not a reference', 'Step 7: Compare MSE and MAE metrics from the results to determine which aggregation method performs better (usage_instructions)', []],
  ['numbers in prose are not references', 'Step 2: loop over the prediction lengths (96, 192, 336, 720)', []],
  ['mixed single lines and ranges',
    'Step 2: Import necessary libraries including AnomalyCLIP_lib, torch, PIL, cv2, numpy (/workspace/test_one_example.py:1-11,43)',
    [['test_one_example.py', 1, 11], ['test_one_example.py', 43, 43]]],
];

describe('requirement references', () => {
  for (const [name, text, want] of CASES) {
    it(name, () => {
      const got = parseRequirementRefs(text).refs.map((r) => [r.path, r.startLine, r.endLine]);
      assert.deepEqual(got, want);
    });
  }
  it('"lines a-b" resolves to the only source file, else is reported', () => {
    const t = 'Step 1: Import necessary libraries for benchmarking (lines 7-28)';
    assert.deepEqual(parseRequirementRefs(t, 'bench.py').refs, [{ path: 'bench.py', startLine: 7, endLine: 28 }]);
    assert.deepEqual(parseRequirementRefs(t).unresolved, ['lines 7-28']);
  });
  it('notebook cells', () => {
    const r = parseRequirementRefs('Step 3: generate reliability diagrams (/workspace/notebooks/paper_experiments.ipynb:8-13 in cell 8)').refs;
    assert.deepEqual(r, [{ path: 'notebooks/paper_experiments.ipynb', startLine: 8, endLine: 13, cell: 8 }]);
  });
});
