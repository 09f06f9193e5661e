import * as assert from 'node:assert/strict';
import { agreementReport, type JudgedItem } from '../../src/core/curation/agreement';
import type { Judgement } from '../../src/core/review';
import { agreementHtml } from '../../src/extension/review/agreementHtml';

/** Items of two runs and labels from a labeller whose name needs escaping. */
function report(labels: Record<string, string>, by = '<ann> & co') {
  const items: JudgedItem[] = ['r1', 'r2'].flatMap((run) => [1, 2].map((n) => ({ run, task: 'c/1/0', item: `requirement:${n}`, phase: 'implementation' as const, label: 'met', judge: 'heuristic (p1)', source: 'x' })));
  const judgements = Object.entries(labels).map(([key, verdict], i) => {
    const [run, item] = key.split(' ');
    return { version: 1, id: i.toString(16).padStart(16, '0'), at: `2026-12-01T10:00:0${i}.000Z`, by, subject: { kind: 'item', task: 'c/1/0', item, run }, kind: 'verdict-flip', value: { verdict } } as Judgement;
  });
  return { ...agreementReport(items, judgements, { resamples: 50 }), skipped: [] };
}

describe('agreement view page (no script)', () => {
  it('has one table row and one κ mark per row, escapes names, and a CSP', () => {
    const html = agreementHtml(report({ 'r1 requirement:1': 'met', 'r1 requirement:2': 'unmet', 'r2 requirement:1': 'met', 'r2 requirement:2': 'met' }),
      { csp: "default-src 'none'", cssUri: 'x.css', inputs: ['/d'], store: '/s' });
    assert.equal((html.match(/<tr><td>/g) ?? []).length, 1);
    assert.equal((html.match(/<circle class="kappa"/g) ?? []).length, 2, 'the row and the legend');
    assert.match(html, /&lt;ann&gt; &amp; co/);
    assert.doesNotMatch(html, /<ann>/);
    assert.doesNotMatch(html, /<script/);
    assert.match(html, /http-equiv="Content-Security-Policy" content="default-src 'none'"/);
    assert.match(html, /0\.75/, 'accuracy 3/4');
  });
  it('shows an undefined κ (one class only) as such', () => {
    const html = agreementHtml(report({ 'r1 requirement:1': 'met', 'r2 requirement:1': 'met' }), { csp: '', cssUri: 'x.css', inputs: [], store: '/s' });
    assert.match(html, /κ undefined/);
    assert.match(html, /one class only/);
    assert.match(html, /<td>—<\/td>/);
  });
});
