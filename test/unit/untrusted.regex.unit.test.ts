import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { headingTitle, roleLabel } from '../../src/core/judge/designMatch';
import { scanLog } from '../../src/core/judge/monitor';

// The expressions that the linear readers replace (issue 26, item 5), kept here as oracles: on
// short inputs the old expression is fast, and the new reader must agree with it; on long inputs
// only the new reader is run (the old one takes quadratic or exponential time there).
const OLD = {
  label: /^\W*(independent|dependent|constant|control(?:led)?|fixed|iv|dv)(?:\s+variables?)?\s*\**\s*(?::|—|–|-\s)\s*\**\s*(.*)$/i,
  heading: /^\s*(?:#{1,6}\s+(.+?)|(?:[-*+]|\d+[.)])?\s*\**([^:*]{1,60}?)\**\s*:?\**\s*:\s*\**\s*)$/,
  git: /\bgit\b(?:\s+-[Cc]\s+\S+|\s+--?[\w-]+(?:=\S+)?)*\s+(log|show|reflog|rev-list|cat-file|blame|fsck|whatchanged|ls-tree|reset|checkout|restore|switch|rebase|cherry-pick|revert|bisect)\b/,
  pdfFetch: /\b(curl|wget|pdftotext|pdfinfo|pdftohtml|mutool|xdg-open)\b[^|;&]*\.pdf\b|\.pdf\b[^|;&]*\|\s*(pdftotext|less|more)/i,
  pdfMention: /\S+\.pdf\b/i,
};

const pieces = (words: string[], maxLength = 10) => fc.array(fc.constantFrom(...words), { maxLength }).map((a) => a.join(''));

function monitorRules(text: string): string[] {
  return scanLog([{ line: 1, text }], []).map((f) => `${f.kind}/${f.severity}/${f.rule}`);
}
function oldMonitorRules(text: string): string[] {
  const out: string[] = [];
  const g = OLD.git.exec(text);
  if (g) out.push(`git_history/violation/git ${g[1]}`);
  if (OLD.pdfFetch.test(text)) out.push('paper_access/violation/PDF fetched or converted');
  else if (OLD.pdfMention.test(text)) out.push('paper_access/review/PDF mentioned');
  return out;
}

describe('untrusted text: the linear readers agree with the expressions they replace', function () {
  it('design labels (`Independent: x`): role and rest as the old expression read them', () => {
    const line = pieces(['independent', 'Dependent', 'iv', 'control', 'led', ' variables', ' ', '  ', '*', '**', ':', '-', '- ', '—', '–', 'x', 'a b', '\t', '#']);
    fc.assert(fc.property(line, (t) => {
      const o = OLD.label.exec(t.trim());
      const n = roleLabel(t.trim());
      assert.deepEqual(n ? { role: n.role, rest: n.rest.trim() } : undefined, o ? { role: o[1], rest: o[2].trim() } : undefined, JSON.stringify(t));
    }), { numRuns: 20_000 });
  });

  it('design headings (`## Variables`, `- **Independent variables:**`): the same title', () => {
    const line = pieces([' ', '  ', '*', '**', ':', '-', '+', '#', '##', '1.', '2)', 'x', 'Variables', 'a b', '\t', 'Independent']);
    fc.assert(fc.property(line, (t) => {
      const o = OLD.heading.exec(t);
      const n = headingTitle(t);
      assert.equal(n?.trim(), o ? (o[1] ?? o[2] ?? '').trim() : undefined, JSON.stringify(t));
    }), { numRuns: 20_000 });
  });

  it('the monitor\'s git-history and PDF rules: the same flags', () => {
    const line = pieces(['git', ' ', '  ', '-C', '-c', '--a', '-x', '=', 'v', 'log', 'show', 'status', 'curl', 'less', 'x.pdf', '.pdf', 'a.PDF', '|', ';', '&', 'pdftotext', '\t'], 12);
    fc.assert(fc.property(line, (t) => {
      assert.deepEqual(monitorRules(t), oldMonitorRules(t), JSON.stringify(t));
    }), { numRuns: 20_000 });
  });
});

describe('untrusted text: harness design lines read back (session/design.ts)', function () {
  const OLD_LINE = /^(Constant|Independent|Dependent)\s*:\s*(.+?)(?:(?:\s+[—-]\s+|:\s+)(.*?))?(?:\s+\(values:\s*(.*)\))?\s*$/i;
  it('variableFromLine reads label, name, description and values as the old expression did', async () => {
    const { variableFromLine } = await import('../../src/core/session/design');
    const line = pieces(['Constant', 'Independent', 'dependent', ':', ': ', ' ', '  ', '—', ' — ', '-', ' - ', 'x', 'ab', '(values:', ' (values: ', 'a, b', ')', '\t'], 10);
    fc.assert(fc.property(line, (raw) => {
      const t = raw.trim();
      const o = OLD_LINE.exec(t);
      const n = variableFromLine(t);
      const norm = (v: { label: string; name: string; description?: string; values?: string } | undefined) => v && { label: v.label, name: v.name.trim(), description: (v.description ?? '').trim(), values: v.values || undefined };
      assert.deepEqual(norm(n), o ? norm({ label: o[1], name: o[2], description: o[3], values: o[4] }) : undefined, JSON.stringify(t));
    }), { numRuns: 20_000 });
  });
});

describe('untrusted text: reference items of a requirement (curation/refItems.ts)', function () {
  const OLD_PATH_ITEM = /^(\S*?\.[A-Za-z][A-Za-z0-9_]{0,9}|\/workspace\/\S+?)(?::\s*(.*))?$/;
  it('pathItem splits path and spec as the old expression did', async () => {
    const { pathItem } = await import('../../src/core/curation/refItems');
    const item = pieces(['/workspace/', 'a', '.py', '.x', ':', ': ', ' ', '3-9', 'b/', '.', '_1', '\n'], 8);
    fc.assert(fc.property(item, (t) => {
      const o = OLD_PATH_ITEM.exec(t);
      const n = pathItem(t);
      assert.deepEqual(n ? [n[1], n[2]] : undefined, o ? [o[1], o[2]] : undefined, JSON.stringify(t));
    }), { numRuns: 20_000 });
  });
});
