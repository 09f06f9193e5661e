import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';

const DATA = path.resolve(__dirname, '..', '..', '..', '..', 'shared', 'data', 'trajectories');
type Obj = Record<string, unknown>;

async function load(file: string): Promise<{ ts: Trajectory[]; problems: string[] }> {
  const ts: Trajectory[] = [];
  const r = await importFiles([file], (t) => { ts.push(t); });
  return { ts, problems: r.problems.map((p) => p.message) };
}

const shape = (t: Trajectory) => t.steps.map((s) => `${s.kind}/${s.actor}/${s.action?.tool ?? ''}/${s.stage ?? ''}`);

/**
 * Issue 33: variants each format's own source defines, made from the real shared files (not written
 * here): Inspect's older sample form, which Inspect itself still reads (`EvalSample.migrate_deprecated`
 * in inspect_ai's log/_log.py: `transcript: {events, content}` for `events` + `attachments`, one
 * `score` for `scores`); SWE-agent's `trajectory`-only and `history`-only files (both written by
 * SWE-agent versions; the demonstrations in its repository hold `history` alone).
 */
describe('trajectory import: variants of each format from its own source, made from the shared files (issue 33)', function () {
  this.timeout(60_000);
  let tmp: string;
  before(async function () {
    if (!(await fsp.stat(DATA).catch(() => undefined))) { console.log('      (skipped: the shared trajectories are absent)'); this.skip(); }
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-variants-'));
  });
  after(async () => { if (tmp) await fsp.rm(tmp, { recursive: true, force: true }); });

  it('an Inspect log in the older sample form (transcript.events, transcript.content, one score) reads as the same steps and score', async () => {
    const src = path.join(DATA, 'inspect-json/UKGovernmentBEIS__inspect_ai/2025-05-12T20-27-36-04-00_browser.json');
    const d = JSON.parse(await fsp.readFile(src, 'utf8')) as Obj;
    const old = structuredClone(d);
    for (const s of old.samples as Obj[]) {
      s.transcript = { events: s.events, content: s.attachments ?? {} };
      delete s.events; delete s.attachments;
      const scores = Object.values((s.scores ?? {}) as Obj);
      assert.equal(scores.length, 1, 'the browser log has one scorer');
      s.score = scores[0]; delete s.scores;
    }
    const file = path.join(tmp, 'browser-old-form.json');
    await fsp.writeFile(file, JSON.stringify(old));
    const a = await load(src); const b = await load(file);
    assert.equal(b.ts.length, a.ts.length);
    assert.ok(a.ts[0].steps.length > 5);
    assert.deepEqual(shape(b.ts[0]), shape(a.ts[0]));
    // attachments resolved the same way: the texts are equal, no `attachment://` left
    assert.deepEqual(b.ts[0].steps.map((s) => s.text ?? ''), a.ts[0].steps.map((s) => s.text ?? ''));
    assert.ok(!JSON.stringify(b.ts[0].steps).includes('attachment://'));
    const value = (t: Trajectory) => Object.values(t.scores ?? {}).map((x) => (x as Obj).value);
    assert.deepEqual(value(b.ts[0]), value(a.ts[0]));
    assert.equal(b.ts[0].sourceUsage?.totalTokens, a.ts[0].sourceUsage?.totalTokens);
  });

  it('a SWE-agent file holding only `trajectory`, or only `history`, reads with steps and says what it lacks', async () => {
    const src = path.join(DATA, 'swe-agent/SWE-agent__SWE-agent/swe-agent__test-repo-i1.traj');
    const d = JSON.parse(await fsp.readFile(src, 'utf8')) as Obj;
    const tOnly = path.join(tmp, 't-only.traj'); const hOnly = path.join(tmp, 'h-only.traj');
    await fsp.writeFile(tOnly, JSON.stringify({ trajectory: d.trajectory }));
    await fsp.writeFile(hOnly, JSON.stringify({ history: d.history }));
    const t = await load(tOnly); const h = await load(hOnly);
    assert.equal(t.ts.length, 1); assert.equal(h.ts.length, 1);
    assert.equal(t.ts[0].format, 'swe-agent'); assert.equal(h.ts[0].format, 'swe-agent');
    assert.equal(t.ts[0].steps.filter((s) => s.kind === 'tool').length, (d.trajectory as unknown[]).length, 'one tool step per trajectory entry');
    // the history holds the task: the issue text as a task step
    assert.ok(h.ts[0].steps.some((s) => s.purpose === 'task' && /SyntaxError|missing_colon|division/.test(s.text ?? '')), 'the issue text as the task');
    assert.ok(h.ts[0].steps.some((s) => s.kind === 'tool'));
    // an empty one: a trajectory without steps that says why
    const empty = path.join(tmp, 'empty.traj');
    await fsp.writeFile(empty, JSON.stringify({ trajectory: [], history: [], info: {} }));
    const e = await load(empty);
    assert.equal(e.ts[0].steps.length, 0);
    assert.ok(e.ts[0].problems.some((p) => p.severity !== 'info' && /recorded no step/.test(p.message)), JSON.stringify(e.ts[0].problems));
  });
});
