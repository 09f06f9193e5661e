// The trajectory viewer's timeline (src/core/viewer/timeline.ts) on the real trajectories of
// ../shared/data/trajectories: rows and running totals against sums computed here from the steps,
// filters against a plain scan, search against a naive case-insensitive scan of the three fields,
// match positions that slice out the query, phase bands that cover the view exactly. Also the
// diffs made from before/after (jsdiff) and the raw source of a step read back from its file.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { applyPatch } from 'diff';
import type { Step } from '../../src/core/steps/step';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';
import { editDiffs } from '../../src/core/viewer/diffs';
import { rawSource } from '../../src/core/viewer/rawSource';
import { fieldTexts, readableJson, stepTokens, Timeline } from '../../src/core/viewer/timeline';
import { stepDetail } from '../../src/extension/trajectory/viewer/detail';
import { repoRoot } from '../harness/paths';

const DATA = path.resolve(repoRoot, '..', 'shared', 'data', 'trajectories');
const FILES = {
  inspect: path.join(DATA, 'inspect-eval/UKGovernmentBEIS__inspect_ai/log_message_deduplication.eval'),
  ais: path.join(DATA, 'inspect-eval/meridianlabs-ai__ts-mono/original/ais-decoder.eval'),
  atif: path.join(DATA, 'atif/meridianlabs-ai__inspect_scout/openhands_hello-world.trajectory.json'),
  classEval: path.join(DATA, 'inspect-eval/METR__inspect-action/2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval'),
  openhands: path.join(DATA, 'openhands-v0/OpenHands__OpenHands/output.jsonl'),
  openhandsV1: path.join(DATA, 'openhands-v1/OpenHands__software-agent-sdk/events.jsonl'),
  mini: path.join(DATA, 'mini-swe-agent/gruckion__mini-swe-agent/sympy__sympy-20154.traj.json'),
  swe: path.join(DATA, 'swe-agent/SWE-agent__SWE-agent/6e44b9__sweagenttestrepo-1c2844.traj'),
};

async function load(file: string): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  await importFiles([file], (t) => { out.push(t); });
  assert.ok(out.length > 0, `no trajectory in ${file}`);
  return out;
}

/** Naive: does any of the step's three fields contain q (case-insensitive)? */
function naiveHas(s: Step, q: string): boolean {
  const f = fieldTexts(s);
  return [f.text, f.action, f.observation].some((t) => t.toLowerCase().includes(q.toLowerCase()));
}

describe('viewer timeline on the shared trajectories', function () {
  this.timeout(60_000);
  const all: Record<string, Trajectory[]> = {};
  before(async () => { for (const [k, f] of Object.entries(FILES)) all[k] = await load(f); });

  it('has one row per step with the step\'s kind, actor, phase and tool, and running totals of tokens and cost', () => {
    let withTokens = 0;
    for (const ts of Object.values(all)) for (const t of ts) {
      const tl = new Timeline(t);
      assert.equal(tl.rows.length, t.steps.length);
      let tok = 0; let usd = 0;
      t.steps.forEach((s, i) => {
        const r = tl.row(i)!;
        assert.deepEqual([r.step, r.kind, r.actor, r.phase, r.tool], [i, s.kind, s.actor, s.phase, s.action?.tool]);
        // a call's tokens as its source counts them: its own total, else input + output + cache read + cache write
        const m = s.model;
        const kinds = [m?.inputTokens, m?.outputTokens, m?.cacheReadTokens, m?.cacheWriteTokens];
        const n = m?.totalTokens ?? kinds.reduce<number>((a, x) => a + (x ?? 0), 0);
        tok += n; usd += s.model?.costUsd ?? 0;
        if (m?.totalTokens !== undefined || kinds.some((x) => x !== undefined)) { withTokens++; assert.equal(r.tokens, n); } else assert.equal(r.tokens, undefined);
        assert.equal(r.totalTokens, tok);
        assert.ok(Math.abs(r.totalCostUsd - usd) < 1e-12);
        assert.ok(r.text.length <= 160, `row text of ${t.id}#${i} is ${r.text.length} characters`);
      });
      assert.deepEqual(tl.totals, { steps: t.steps.length, tokens: tok, costUsd: usd, timed: t.steps.filter((s) => s.time).length });
    }
    assert.ok(withTokens > 5, `only ${withTokens} steps with tokens in the shared files`);
    // an Inspect log's model calls carry tokens (its total is their sum); the ATIF run's carry cost too
    const ins = new Timeline(all.ais[0]);
    assert.ok(ins.totals.tokens > 0);
    assert.equal(ins.totals.tokens, all.ais[0].steps.reduce((n, s) => n + (stepTokens(s) ?? 0), 0));
    const atif = new Timeline(all.atif[0]);
    assert.ok(atif.totals.costUsd > 0);
    assert.equal(atif.rows[atif.rows.length - 1].totalCostUsd, atif.totals.costUsd);
  });

  it('filters by kind, actor, phase and tool (values or-ed within a facet, facets and-ed) and by pinned steps', () => {
    const t = all.openhands[1];
    const tl = new Timeline(t);
    const f = tl.facets();
    assert.equal(Object.values(f.kinds).reduce((a, b) => a + b, 0), t.steps.length);
    // each kind alone, and all kinds together
    let sum = 0;
    for (const k of Object.keys(f.kinds)) {
      const got = tl.filter({ kinds: [k] });
      assert.deepEqual(got, t.steps.flatMap((s, i) => (s.kind === k ? [i] : [])));
      sum += got.length;
    }
    assert.equal(sum, t.steps.length);
    assert.equal(tl.filter({ kinds: Object.keys(f.kinds) }).length, t.steps.length);
    // a combination: two tools of one actor in two phases
    const tools = Object.keys(f.tools).filter((x) => x).slice(0, 2);
    assert.ok(tools.length === 2, `the OpenHands run has tools ${Object.keys(f.tools).join(', ')}`);
    const want = t.steps.flatMap((s, i) => (tools.includes(s.action?.tool ?? '') && s.actor === 'agent' && ['implementation', 'execution'].includes(s.phase) ? [i] : []));
    assert.ok(want.length > 0);
    assert.deepEqual(tl.filter({ tools, actors: ['agent'], phases: ['implementation', 'execution'] }), want);
    // '' stands for steps without a tool
    assert.deepEqual(tl.filter({ tools: [''] }), t.steps.flatMap((s, i) => (s.action ? [] : [i])));
    assert.deepEqual(tl.filter({ pinned: true }, new Set([3, 1, 999])), [1, 3]);
    assert.deepEqual(tl.filter({ pinned: true, kinds: [t.steps[3].kind] }, new Set([3, 1])), t.steps[1].kind === t.steps[3].kind ? [1, 3] : [3]);
  });

  it('searches text, action and observation case-insensitively, as a naive scan does, also within a filtered view', () => {
    for (const [name, ts] of Object.entries(all)) for (const t of ts) {
      const tl = new Timeline(t);
      // queries taken from the data: a word of some observation, of some command, and one no step has
      const obs = t.steps.find((s) => (s.observation?.text.length ?? 0) > 40)?.observation?.text;
      const cmd = t.steps.find((s) => s.action?.command)?.action?.command;
      const queries = [obs && obs.slice(10, 22).toUpperCase(), cmd && cmd.slice(0, 6), 'no step says zqxjv'].filter((q): q is string => !!q && q.trim().length > 0);
      for (const q of queries) {
        const r = tl.search(q);
        const naive = t.steps.flatMap((s, i) => (naiveHas(s, q) ? [i] : []));
        assert.deepEqual(r.positions, naive, `${name} ${t.id}: search ${JSON.stringify(q)}`);
        assert.ok(r.occurrences >= r.positions.length);
        for (const p of r.positions.slice(0, 5)) {
          const ms = tl.matches(p, q);
          assert.ok(ms.length > 0);
          const texts = fieldTexts(t.steps[p]);
          for (const m of ms) assert.equal(texts[m.field].slice(m.start, m.end).toLowerCase(), q.toLowerCase());
        }
        // within a filtered view the hits are view positions
        const view = tl.filter({ kinds: ['tool', 'model'] });
        const within = tl.search(q, view);
        assert.deepEqual(within.positions.map((p) => view[p]), naive.filter((i) => view.includes(i)));
      }
    }
    assert.deepEqual(new Timeline(all.mini[0]).search('').positions, []);
  });

  it('marks the matches of a step\'s detail at offsets into the texts it shows (arguments pretty-printed)', () => {
    const t = all.ais[0];
    const tl = new Timeline(t);
    const hits = tl.search('nmea').positions;
    assert.ok(hits.length > 1);
    let inAction = 0;
    for (const i of hits) {
      const d = stepDetail(t.file, tl, i, { limit: 1_000_000, search: 'NMEA', pins: [], judgements: [] });
      assert.ok(d.matches.length > 0, `step ${i}`);
      const shown = { text: d.text?.text ?? '', action: d.action?.display.text ?? '', observation: d.observation?.text.text ?? '' };
      for (const m of d.matches) assert.equal(shown[m.field].slice(m.start, m.end).toLowerCase(), 'nmea');
      inAction += d.matches.filter((m) => m.field === 'action').length;
    }
    assert.ok(inAction > 0, 'some match is in an action\'s arguments');
  });

  it('finds a word in a tool\'s arguments and counts every occurrence', () => {
    const t = all.swe[0];
    const tl = new Timeline(t);
    const s = t.steps.findIndex((x) => x.action?.command);
    const word = t.steps[s].action!.command!.split(/\s+/)[0];
    const r = tl.search(word);
    assert.ok(r.positions.includes(s));
    const count = t.steps.reduce((n, x) => { const f = fieldTexts(x); return n + [f.text, f.action, f.observation].reduce((m, y) => m + y.toLowerCase().split(word.toLowerCase()).length - 1, 0); }, 0);
    assert.equal(r.occurrences, count);
  });

  it('shows a model step that only calls a tool as "→ tool(args…)", and a JSON text (Inspect info) as its fields', () => {
    let calls = 0;
    for (const list of Object.values(all)) for (const t of list) {
      const tl = new Timeline(t);
      t.steps.forEach((s, i) => {
        if (s.kind === 'model' && !s.text?.trim() && s.action) {
          calls++;
          assert.ok(tl.row(i)!.text.startsWith(`→ ${s.action.tool}(`), `${t.id} step ${i}: ${tl.row(i)!.text}`);
        }
      });
    }
    assert.ok(calls > 0, 'no model step with only a tool call in the shared trajectories');
    // a model step whose calls are rows of their own (Inspect tool events) names them
    const folded = { index: 0, kind: 'model' as const, actor: 'agent' as const, phase: 'design' as const, text: '', source: { file: 'x' }, extra: { calls: [{ id: 'c1', tool: 'bash' }, { id: 'c2', tool: 'python' }] } };
    assert.equal(new Timeline({ ...all.inspect[0], steps: [folded] }).row(0)!.text, '→ bash, python');
    assert.equal(readableJson('{"level":"info","data":{"n":2},"msg":"started"}'), 'level: info · data: {"n":2} · msg: started');
    assert.equal(readableJson('not json {'), '');
    assert.equal(readableJson('[1,2]'), '');
  });

  it('makes phase bands that cover the view exactly, each one phase, neighbours different', () => {
    for (const ts of Object.values(all)) for (const t of ts) {
      const tl = new Timeline(t);
      for (const view of [undefined, tl.filter({ actors: ['agent'] })]) {
        const steps = view ?? t.steps.map((_, i) => i);
        const bands = tl.bands(view);
        if (!steps.length) { assert.deepEqual(bands, []); continue; }
        assert.equal(bands[0].from, 0);
        assert.equal(bands[bands.length - 1].to, steps.length - 1);
        // a band is one phase of the agent's, or one stage of the harness's work (never both)
        bands.forEach((b, k) => {
          if (k) { assert.equal(b.from, bands[k - 1].to + 1); assert.ok(b.phase !== bands[k - 1].phase || !!b.stage !== !!bands[k - 1].stage); }
          for (let p = b.from; p <= b.to; p++) { const st = t.steps[steps[p]]; assert.equal(st.stage ?? st.phase, b.phase); assert.equal(!!st.stage, !!b.stage); }
        });
      }
    }
    // the OpenHands run moves through more than one phase
    assert.ok(new Timeline(all.openhands[0]).bands().length > 1);
  });

  it('shows edits as diffs: the source\'s, or one made from before/after that applies back', () => {
    const edits = Object.values(all).flat().flatMap((t) => t.steps.filter((s) => s.edits?.length));
    assert.ok(edits.length > 0, 'no step with edits in the shared files');
    for (const s of edits) for (const [k, d] of editDiffs(s).entries()) {
      const e = s.edits![k];
      if (e.diff?.trim()) assert.equal(d.diff, e.diff);
      else if (e.before !== undefined && e.after !== undefined) {
        assert.equal(d.made, true);
        assert.equal(applyPatch(e.before, d.diff), e.after, `the made diff of ${e.path} does not apply back`);
      }
    }
    const made = editDiffs({ index: 0, kind: 'edit', actor: 'agent', phase: 'implementation', source: { file: 'x' }, edits: [{ path: 'a.py', before: 'x = 1\ny = 2\n', after: 'x = 1\ny = 3\n' }] });
    assert.match(made[0].diff, /^-y = 2$/m);
    assert.match(made[0].diff, /^\+y = 3$/m);
  });

  it('reads the raw source of a step back from its file: a zip entry, a JSON Lines line, a whole document', async () => {
    const ins = all.inspect[0].steps.find((s) => s.source.entry && s.source.pointer)!;
    const r1 = JSON.parse((await rawSource(ins.source)).text);
    assert.equal(r1.event, ins.source.kind);
    const v1 = all.openhandsV1[0].steps.find((s) => s.source.line)!;
    const r2 = JSON.parse((await rawSource(v1.source)).text);
    assert.equal(r2.kind, v1.source.kind);
    if (v1.source.id) assert.equal(r2.id, v1.source.id);
    const mini = all.mini[0].steps[1];
    const r3 = await rawSource(mini.source);
    assert.ok(r3.text.length > 0 && !r3.cut);
    await assert.rejects(rawSource({ ...ins.source, pointer: '/events/99999' }), /nothing at/);
  });
});
