import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../harness/paths';

// Every document that a comment or a doc cites exists: `docs/<name>.md` against the repository,
// `../shared/docs/<name>.md` against the folder beside it, a relative link in docs/ against docs/.

const SCANNED = ['src', 'bench', 'scripts', 'docs', 'sandbox', 'webview-ui', 'README.md', 'eslint'];

async function files(p: string): Promise<string[]> {
  const st = await fsp.stat(p).catch(() => undefined);
  if (!st) return [];
  if (st.isFile()) return /\.(ts|mjs|md|sh)$/.test(p) ? [p] : [];
  const out: string[] = [];
  for (const e of await fsp.readdir(p)) out.push(...(await files(path.join(p, e))));
  return out;
}

describe('cited documents exist', () => {
  it('every docs/*.md and ../shared/docs/*.md a file names, and every relative .md link in docs/, exists', async () => {
    const all = (await Promise.all(SCANNED.map((s) => files(path.join(repoRoot, s))))).flat();
    assert.ok(all.length > 50, `files scanned: ${all.length}`);
    const missing: string[] = [];
    let cited = 0;
    for (const f of all) {
      const text = await fsp.readFile(f, 'utf8');
      for (const m of text.matchAll(/(?<![\w/.])(\.\.\/shared\/docs|docs)\/([\w.-]+\.md)\b/g)) {
        cited++;
        const target = m[1] === 'docs' ? path.join(repoRoot, 'docs', m[2]) : path.resolve(repoRoot, m[1], m[2]);
        if (!(await fsp.stat(target).catch(() => undefined))) missing.push(`${path.relative(repoRoot, f)} cites ${m[0]}`);
      }
      if (f.startsWith(path.join(repoRoot, 'docs') + path.sep)) {
        for (const m of text.matchAll(/\]\(([\w.-]+\.md)(#[\w-]*)?\)/g)) {
          cited++;
          if (!(await fsp.stat(path.join(path.dirname(f), m[1])).catch(() => undefined))) missing.push(`${path.relative(repoRoot, f)} links ${m[1]}`);
        }
      }
    }
    assert.ok(cited > 10, `citations found: ${cited}`);
    assert.deepEqual(missing, []);
  });
});
