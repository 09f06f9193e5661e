import * as assert from 'node:assert/strict';
import {
  GapsActionSchema, HostMessageSchema, SECTIONS, WebviewMessageSchema,
  type BriefView, type GapsView, type PhasesView, type SectionAction, type SectionName, type SectionState,
} from '../../src/protocol/messages';

const brief: BriefView = { taskId: 'sample/toycal/0', type: 1, question: 'q', method: 'm', agentInstructions: '', problems: [] };
const phasesView: PhasesView = {
  kind: 'state', phase: 'design', finished: null,
  clock: { status: 'running', workingMs: 1000, budgetMs: null, text: '0:00:01' },
  design: { constants: [{ name: 'seed', description: 'fixed' }], independent: [], dependent: [], freeText: '' },
  conclusion: '', notes: [], runs: [{ id: 'r1', startedAt: '2026-03-01T09:00:00.000Z', exitCode: null, durationMs: 5 }], running: false,
  container: { state: 'ready' }, patch: null, claims: [], results: [],
};
const gapsView: GapsView = {
  kind: 'heuristic', by: 'heuristic', createdAt: '2026-03-01T09:00:00.000Z', stale: false, summary: 's', notes: [],
  phases: [{ id: 'implementation', title: 'Implementation', score: '1/2', items: [{
    label: 'Requirement 1', verdict: 'met', tone: 'ok', reason: 'r',
    links: [
      { label: 'a.py:1-2', call: { action: 'revealHunk', payload: { path: 'a.py', newStart: 1, newEnd: 2 } } },
      { label: 'ground truth', call: { action: 'openDiff', payload: { index: 1 } } },
      { label: 'requirement', call: { action: 'showRequirement', payload: { index: 1 } } },
    ],
  }] }],
};

/** One valid state and action per section: a section added to the map without samples here is a compile error. */
const samples: { [K in SectionName]: { states: Array<SectionState<K>>; actions: Array<SectionAction<K>> } } = {
  phases: {
    states: [phasesView, { kind: 'log', runId: 'r1', text: 'epoch 1\n' }],
    actions: [{ action: 'setPhase', payload: { phase: 'execution' } }, { action: 'clock', payload: { op: 'pause', reason: 'lunch' } }, { action: 'submit' }],
  },
  gaps: { states: [gapsView], actions: [{ action: 'openDiff', payload: { index: 2, hunk: 0 } }, { action: 'rerun' }] },
  feasibility: {
    states: [{ status: 'checking', summary: 'Checking…', needs: [], notes: [] },
      { status: 'cannot-run', summary: 'cannot run here', from: 'curation', image: 'expbench/sandbox:1', needs: [{ kind: 'gpu', what: '8 GPU(s)', have: 'no', detail: 'no GPU support' }], notes: [] }],
    actions: [{ action: 'recheck' }],
  },
};

/** What crosses postMessage: a structured clone (JSON for these). */
const wire = (m: unknown): unknown => JSON.parse(JSON.stringify(m));
const hostOk = (m: unknown) => HostMessageSchema.safeParse(wire(m)).success;
const webviewOk = (m: unknown) => WebviewMessageSchema.safeParse(wire(m)).success;

describe('protocol: messages and the section map', () => {
  it('every section of the map has samples, and its states and actions parse in their envelopes', () => {
    assert.deepEqual(Object.keys(samples).sort(), Object.keys(SECTIONS).sort());
    for (const section of Object.keys(SECTIONS) as SectionName[]) {
      for (const state of samples[section].states) assert.ok(hostOk({ type: 'section', section, state }), `${section} state ${JSON.stringify(state).slice(0, 60)}`);
      let id = 1;
      for (const call of samples[section].actions) assert.ok(webviewOk({ type: 'request', id: id++, section, call }), `${section} action ${JSON.stringify(call)}`);
    }
  });

  it('a parsed section message keeps its typed payload', () => {
    const m = HostMessageSchema.parse(wire({ type: 'section', section: 'phases', state: phasesView }));
    assert.ok(m.type === 'section' && m.section === 'phases' && m.state.kind === 'state');
    assert.equal(m.state.runs[0]!.exitCode, null);
    assert.deepEqual(m.state, phasesView);
  });

  it('rejects a section name outside the map, and a state or action of another section', () => {
    assert.equal(hostOk({ type: 'section', section: 'verify', state: phasesView }), false);
    assert.equal(hostOk({ type: 'section', section: 'gaps', state: phasesView }), false);
    assert.equal(hostOk({ type: 'section', section: 'phases', state: gapsView }), false);
    assert.equal(webviewOk({ type: 'request', id: 1, section: 'phases', call: { action: 'openDiff', payload: { index: 1 } } }), false);
    assert.equal(webviewOk({ type: 'request', id: 1, section: 'gaps', call: { action: 'submit' } }), false);
    assert.equal(webviewOk({ type: 'request', id: 1, section: 'nope', call: { action: 'submit' } }), false);
  });

  it('rejects malformed payloads: wrong types, missing fields, unknown enum values, a payload where none is taken', () => {
    assert.equal(hostOk({ type: 'section', section: 'phases', state: { ...phasesView, phase: 'review' } }), false);
    assert.equal(hostOk({ type: 'section', section: 'phases', state: { ...phasesView, running: 'no' } }), false);
    assert.equal(hostOk({ type: 'section', section: 'phases', state: { kind: 'log', runId: 'r1' } }), false);
    assert.equal(hostOk({ type: 'section', section: 'gaps', state: { ...gapsView, kind: 'oracle' } }), false);
    const req = (section: string, call: unknown) => webviewOk({ type: 'request', id: 7, section, call });
    assert.equal(req('phases', { action: 'setPhase', payload: { phase: 'review' } }), false);
    assert.equal(req('phases', { action: 'setConclusion', payload: {} }), false);
    assert.equal(req('phases', { action: 'addNote' }), false);
    assert.equal(req('phases', { action: 'runScript', payload: { now: true } }), false);
    assert.equal(req('gaps', { action: 'openDiff', payload: { index: 1.5 } }), false);
    assert.equal(req('gaps', { action: 'revealHunk', payload: { path: 'a.py', newStart: '1', newEnd: 2 } }), false);
  });

  it('request ids are positive integers; replies carry one and are ok or an error with a message', () => {
    const call = { action: 'submit' };
    for (const id of [0, -1, 1.5, '1', null]) assert.equal(webviewOk({ type: 'request', id, section: 'phases', call }), false, `id ${String(id)}`);
    assert.equal(webviewOk({ type: 'request', section: 'phases', call }), false);
    assert.ok(webviewOk({ type: 'cancel', id: 3 }));
    assert.equal(webviewOk({ type: 'cancel', id: 0 }), false);
    assert.ok(hostOk({ type: 'reply', id: 3, ok: true }));
    assert.ok(hostOk({ type: 'reply', id: 3, ok: false, error: { message: 'no', code: 'CANCELLED' } }));
    assert.equal(hostOk({ type: 'reply', id: 3, ok: false }), false);
    assert.equal(hostOk({ type: 'reply', id: 3, ok: 'yes' }), false);
    assert.equal(hostOk({ type: 'reply', ok: true }), false);
  });

  it('rejects the old untyped envelopes and messages the protocol does not have', () => {
    assert.equal(webviewOk({ type: 'sectionAction', key: 'phases', action: 'submit' }), false);
    assert.equal(webviewOk({ type: 'command', command: 'expbench.openTask', args: [] }), false);
    assert.equal(hostOk({ type: 'section', key: 'phases', payload: phasesView }), false);
    assert.ok(hostOk({ type: 'brief', brief }));
    assert.equal(hostOk({ type: 'brief', brief: { ...brief, type: 4 } }), false);
    assert.ok(webviewOk({ type: 'ready' }));
    assert.ok(webviewOk({ type: 'openLink', url: 'https://arxiv.org' }));
  });

  it('every link of the gap report is a gaps action the host accepts', () => {
    for (const l of gapsView.phases[0]!.items[0]!.links) assert.ok(GapsActionSchema.safeParse(wire(l.call)).success, l.label);
  });
});
