import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { groundTruthMarkdown, readGroundTruth } from '../../src/core/curation/groundTruth';
import { git } from '../../src/core/git';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';

describe('ground truth at the pin (a git repository built here)', function () {
  this.timeout(60_000);
  let dir: string;
  after(async () => { if (dir) await fsp.rm(dir, { recursive: true, force: true }); });

  it('resolves references (exact, a bare name by search, missing), lists masked paths with their blob ids, at the pinned commit', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-gt-'));
    const repo = path.join(dir, 'repo');
    await fsp.mkdir(path.join(repo, 'src'), { recursive: true });
    await git(['init', '-q', '-b', 'main'], { repo: 'none', cwd: repo });
    const commit = async (files: Record<string, string>) => {
      for (const [f, body] of Object.entries(files)) await fsp.writeFile(path.join(repo, f), body);
      await git(['add', '-A'], { repo: { checkout: repo } });
      await git(['-c', 'user.name=t', '-c', 'user.email=t@localhost', 'commit', '-q', '-m', 'c'], { repo: { checkout: repo } });
      return (await git(['rev-parse', 'HEAD'], { repo: { checkout: repo } })).text.trim();
    };
    const pinned = await commit({ 'train.py': 'a\nb\nc\n', 'src/utils.py': 'u1\nu2\nu3\n', 'README.md': 'We get 93.1%.\n' });
    await commit({ 'train.py': 'changed later\n' });
    const d = path.join(dir, 'ds', 'tasks', 'conf', '7');
    await fsp.mkdir(d, { recursive: true });
    await fsp.writeFile(path.join(d, '7_complete_final.json'), JSON.stringify({ questions: [{
      question: 'Does training help?', method: 'train', expected_outcome: 'Accuracy 93.1%.', usage_instructions: 'python train.py',
      design_complexity: { constant_variables: { seed: 'fixed' }, independent_variables: { lr: [0.1, 0.01] }, dependent_variables: { acc: 'accuracy' } },
      masked_source: ['/workspace/train.py'], source: ['/workspace/train.py'],
      requirements: ['Step 1: train (/workspace/train.py:1-2)', 'Step 2: helpers (/workspace/utils.py:3)', 'Step 3: gone (/workspace/nothere.py)'],
    }] }));
    const task = findTask(await loadDatasets([path.join(dir, 'ds')]), 'conf/7/0');
    assert.ok(task);
    const g = await readGroundTruth(task, { source: repo, commit: pinned, cacheDir: path.join(dir, 'cache') });
    assert.equal(g.commit, pinned);
    const blob = async (p: string) => (await git(['rev-parse', `${pinned}:${p}`], { repo: { checkout: repo } })).text.trim();
    assert.deepEqual(g.masked.map((m) => [m.path, m.blob]).sort(), [['README.md', await blob('README.md')], ['train.py', await blob('train.py')]]);
    assert.deepEqual(g.requirements.map((r) => r.refs.map((x) => [x.status, x.file ?? null, x.startLine, x.endLine])), [
      [['exact', 'train.py', 1, 2]], [['resolved', 'src/utils.py', 3, 3]], [['missing', null, null, null]],
    ]);
    assert.deepEqual(g.design.independent.map((v) => [v.name, v.values]), [['lr', ['0.1', '0.01']]]);
    const md = groundTruthMarkdown(g);
    // a variable given as a list shows its values once (its description is the same list, joined)
    assert.ok(md.includes('- **lr** — values: `0.1`, `0.01`\n'), md);
    for (const s of ['## Design variables', '### Constant', '- **seed**: fixed', '## Expected outcome', 'Accuracy 93.1%.', '## Usage instructions',
      '`utils.py:3` → resolved to `src/utils.py`', '`nothere.py` → **not in the tree**', `- \`train.py\` blob \`${await blob('train.py')}\``]) {
      assert.ok(md.includes(s), `${s} in:\n${md}`);
    }
  });
});
