/**
 * A session exported to Inspect (`session export --format inspect-eval|inspect-json`) and imported
 * back (`session import`) keeps its submission (issue 33, item 9): it came in with an empty patch
 * and empty answers. Now the export carries the frozen answers (`private/answers.json`) and patch
 * (`private/harness/patch.diff`) in the sample's `metadata.expbench`, and the importer reads them:
 * the imported session has the same answers and the same workspace changes. Through `node dist/cli.js`.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SessionLayout } from '../../src/core/layout';
import { Session } from '../../src/core/session/session';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';
import { cli } from './cli.helpers';

describe('session export to Inspect and import back keeps the patch and the answers', function () {
  this.timeout(180_000);
  let base: string;
  let session: string;
  const answers = { design: ['Constant: dataset — the toy data', 'Independent: temperature (values: 1, 2)'], conclusion: 'ECE drops from 0.12 to 0.03.' };
  const files: Record<string, string> = {
    'reproduce_exp_bench.sh': '#!/bin/bash\npython3 experiments/run.py\n',
    'experiments/run.py': 'print("ECE 0.12 at T=1, 0.03 at T=2")\n',
    'notes/plan with spaces.md': 'a file whose name has spaces\n',
  };

  before(async () => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-roundtrip-'));
    session = path.join(base, 's1');
    const p = await cli(['prepare', 'sample/toycal/0', '--out', session, '--cache', path.join(base, 'cache')]);
    assert.equal(p.code, 0, p.stderr);
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(session, 'workspace', rel)), { recursive: true });
      fs.writeFileSync(path.join(session, 'workspace', rel), text);
    }
    // a change to a file of the task start too
    fs.appendFileSync(path.join(session, 'workspace', 'toycal', 'data.py'), '\n# tuned by hand\nSEED = 7\n');
    fs.writeFileSync(path.join(base, 'answers.json'), JSON.stringify(answers));
    const s = await cli(['session', 'submit', session, '--answers', path.join(base, 'answers.json'), '--no-verify', '--no-judge']);
    assert.equal(s.code, 0, s.stderr);
  });
  after(() => { if (base) fs.rmSync(base, { recursive: true, force: true }); });

  for (const format of ['inspect-eval', 'inspect-json'] as const) {
    it(`${format}: the imported session has the same answers and the same workspace changes`, async () => {
      const log = path.join(base, `s1.${format === 'inspect-eval' ? 'eval' : 'json'}`);
      const e = await cli(['session', 'export', session, '--format', format, '--out', log]);
      assert.equal(e.code, 0, e.stderr);
      // the importer reads them (the trajectory's patch and answers)
      let t: Trajectory | undefined;
      await importFiles([log], (x) => { t ??= x; });
      assert.equal(t?.patch, fs.readFileSync(path.join(session, 'private', 'harness', 'patch.diff'), 'utf8'));
      const out = path.join(base, `imported-${format}`);
      const r = await cli(['session', 'import', log, '--task', 'sample/toycal/0', '--out', out, '--cache', path.join(base, 'cache'), '--no-verify', '--no-judge', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const rec = JSON.parse(r.stdout) as { patch: { applied: number; failed: number }; problems: Array<{ message: string }> };
      assert.equal(rec.patch.failed, 0, JSON.stringify(rec.problems));
      assert.ok(rec.patch.applied >= 4, `applied ${rec.patch.applied}`);
      assert.ok(!rec.problems.some((p) => /no patch|gives no design|submitted empty/.test(p.message)), JSON.stringify(rec.problems));
      const l = new SessionLayout(out);
      assert.deepEqual(JSON.parse(fs.readFileSync(l.answers, 'utf8')), JSON.parse(fs.readFileSync(new SessionLayout(session).answers, 'utf8')));
      for (const [rel, text] of Object.entries(files)) assert.equal(fs.readFileSync(path.join(l.workspace, rel), 'utf8'), text, rel);
      assert.equal(fs.readFileSync(path.join(l.workspace, 'toycal', 'data.py'), 'utf8'), fs.readFileSync(path.join(session, 'workspace', 'toycal', 'data.py'), 'utf8'));
    });
  }

  it('an unsubmitted session exports no patch or answers (nothing frozen)', async () => {
    const draft = path.join(base, 'draft');
    assert.equal((await cli(['prepare', 'sample/toycal/0', '--out', draft, '--cache', path.join(base, 'cache')])).code, 0);
    fs.writeFileSync(path.join(draft, 'workspace', 'draft.txt'), 'not submitted\n');
    const s = await Session.open(new SessionLayout(draft), { client: 'test', draftQuietMs: 0 });
    await s.addNote('working on it');
    s.setConclusion('a draft conclusion');
    await s.close();
    const log = path.join(base, 'draft.json');
    const e = await cli(['session', 'export', draft, '--format', 'inspect-json', '--out', log, '--json']);
    assert.equal(e.code, 0, e.stderr);
    const sample = JSON.parse(fs.readFileSync(log, 'utf8')).samples[0];
    assert.equal(sample.metadata.expbench.patch, undefined);
    assert.equal(sample.metadata.expbench.answers, undefined);
  });
});
