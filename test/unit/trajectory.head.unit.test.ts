// The head of a large Inspect sample (ImportContext.head, issue 30): handed over before the whole,
// the same mapping over the first HEAD_EVENTS events, on copies: the whole trajectory is the one an
// import without a head makes (its steps, its redaction count), and the head's steps are its first
// steps. The log is generated in Inspect's shape (test/harness/bigInspectLog.ts), with a secret in
// the first tool result.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HEAD_EVENTS } from '../../src/core/trajectory/context';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';
import { makeInspectEval } from '../harness/bigInspectLog';

describe('trajectory import: the head of a large Inspect sample', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-head-')); });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('hands the first events mapped before the whole; the whole equals an import without a head', async () => {
    const file = path.join(dir, 'run.eval');
    const secret = `OPENAI_API_KEY=sk-proj-${'a1B2c3D4'.repeat(4)}`;
    const made = await makeInspectEval(file, { steps: 8000, words: [5, 5, 5, 5], firstResult: secret });
    assert.ok(made.events > HEAD_EVENTS);
    const plain: Trajectory[] = [];
    await importFiles([file], (t) => { plain.push(t); });
    const order: string[] = [];
    let head: Trajectory | undefined;
    const whole: Trajectory[] = [];
    await importFiles([file], (t) => { order.push('whole'); whole.push(t); }, { onHead: (t) => { order.push('head'); head = t; } });
    assert.deepEqual(order, ['head', 'whole']);
    assert.equal(whole[0].steps.length, 8000);
    assert.deepEqual(whole[0].steps, plain[0].steps, 'the whole is the same trajectory');
    assert.equal(whole[0].redactions, plain[0].redactions);
    assert.ok(plain[0].redactions >= 1, 'the secret in the first tool result is redacted');
    assert.ok(!JSON.stringify(whole[0].steps).includes('sk-proj-'), 'and is nowhere in the steps');
    assert.equal(head!.sourceEvents, HEAD_EVENTS);
    assert.ok(head!.steps.length > 1000 && head!.steps.length < whole[0].steps.length, `head of ${head!.steps.length} steps`);
    assert.equal(head!.redactions, plain[0].redactions, 'the head redacts what it holds, counted on its own copy');
    // every head step but the last round's model call (its tool call may lie past the head) is the whole's
    for (const s of head!.steps.slice(0, -2)) {
      const w = whole[0].steps[s.index];
      assert.deepEqual({ kind: s.kind, text: s.text, action: s.action, observation: s.observation, source: s.source }, { kind: w.kind, text: w.text, action: w.action, observation: w.observation, source: w.source }, `step ${s.index}`);
    }
  });

  it('hands no head for a sample of up to HEAD_EVENTS events', async () => {
    const file = path.join(dir, 'small.eval');
    await makeInspectEval(file, { steps: 200, words: [5, 5, 5, 5] });
    let heads = 0; let n = 0;
    await importFiles([file], () => { n++; }, { onHead: () => { heads++; } });
    assert.equal(n, 1);
    assert.equal(heads, 0);
  });
});
