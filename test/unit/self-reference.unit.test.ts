import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './cli.helpers';

/**
 * The project speaks of itself only (issue 33 item 8): its text names no helper or engineering
 * session of its own making ("helper S", "a helper session"), and its docs, data and product code
 * hold no machine path: nothing under `/work/` anywhere; `/tmp/` in docs only in a command example
 * (inline code or a code block), never in data, and in product code only as the containers'
 * `/tmp/.expbench…` paths. Screenshots are looked at by eye (a PNG's pixels are not searched).
 */
const THIS_FILE = 'test/unit/self-reference.unit.test.ts';

/** The repository's text files: tracked or new and not ignored, without NUL bytes. */
function textFiles(): Array<{ file: string; text: string }> {
  const names = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\0').filter((f) => f && f !== THIS_FILE && !f.startsWith('node_modules/'));
  const out: Array<{ file: string; text: string }> = [];
  for (const file of [...new Set(names)]) {
    const abs = path.join(ROOT, file);
    let st: fs.Stats;
    try { st = fs.lstatSync(abs); } catch { continue; } // deleted in the work tree
    if (!st.isFile() || st.size > 20 * 1024 * 1024) continue;
    const buf = fs.readFileSync(abs);
    if (buf.subarray(0, 8192).includes(0)) continue; // binary (PNG, wasm, archives)
    out.push({ file, text: buf.toString('utf8') });
  }
  return out;
}

/** Names of helpers and engineering sessions: "helper S", "helper-R", "a helper session", "an AI helper". */
const HELPER_NAMES = [/\b[Hh]elper[- ][A-Z]\b/, /\bhelper sessions?\b/i, /\bAI helpers?\b/i];

/** Markdown text without its code: fenced and indented blocks, inline code spans (examples may show paths). */
export function proseOf(markdown: string): string {
  return markdown
    .replace(/^( {0,3})(```|~~~)[^\n]*\n[\s\S]*?^\1\2[^\n]*$/gm, '')
    .split('\n').filter((l) => !/^( {4}|\t)/.test(l)).join('\n')
    .replace(/(`+)[^`]*?\1/g, '');
}

const isDoc = (f: string): boolean => f.endsWith('.md');
const isData = (f: string): boolean => f.startsWith('test/data/') || f.startsWith('samples/');
const isProductCode = (f: string): boolean => /^(src|webview-ui|media)\//.test(f);

/** Every finding in the repository: `file:line: what`. */
function findings(files: Array<{ file: string; text: string }>): string[] {
  const out: string[] = [];
  const report = (file: string, text: string, index: number, what: string): void => {
    out.push(`${file}:${text.slice(0, index).split('\n').length}: ${what}`);
  };
  for (const { file, text } of files) {
    for (const re of HELPER_NAMES) {
      const m = re.exec(text);
      if (m) report(file, text, m.index, `names a helper or session: "${m[0]}"`);
    }
    const work = text.indexOf('/work/');
    if (work >= 0 && (isDoc(file) || isData(file) || isProductCode(file) || file.startsWith('test/') || file.startsWith('bench/') || file.startsWith('scripts/'))) {
      report(file, text, work, 'a machine path under /work/');
    }
    if (isDoc(file)) {
      const prose = proseOf(text);
      const i = prose.indexOf('/tmp/');
      if (i >= 0) out.push(`${file}: a machine path under /tmp/ outside a command example: "${prose.slice(Math.max(0, i - 40), i + 40).replace(/\s+/g, ' ')}"`);
    } else if (isData(file)) {
      const i = text.indexOf('/tmp/');
      if (i >= 0) report(file, text, i, 'a machine path under /tmp/ in data');
    } else if (isProductCode(file)) {
      const m = /\/tmp\/(?!\.expbench)/.exec(text);
      if (m) report(file, text, m.index, 'a host path under /tmp/ in product code (only the containers\' /tmp/.expbench… is allowed)');
    }
  }
  return out;
}

describe('the project speaks of itself only (names and machine paths)', () => {
  it('no helper or session names anywhere, no machine paths in docs, data or product code', () => {
    const files = textFiles();
    assert.ok(files.length > 300, `read ${files.length} text files`);
    assert.ok(files.some((f) => f.file === 'README.md') && files.some((f) => f.file.startsWith('test/data/')), 'README and test data are searched');
    assert.deepEqual(findings(files), []);
  });

  it('the check can fail: planted names and paths are found, examples and container paths are not', () => {
    const planted = findings([
      { file: 'docs/x.md', text: 'Labelled by helper S.\nSee /tmp/run1 for the log.\n\n    expbench prepare t --out /tmp/s1\n\nor `--out /tmp/s2`.\n```\ncat /tmp/s3/x\n```\n' },
      { file: 'test/data/y/manifest.json', text: '{"location": "/tmp/build-1/repo"}' },
      { file: 'src/core/z.ts', text: "const a = '/tmp/.expbench/out';\nconst b = '/tmp/host-file';\n" },
      { file: 'test/unit/w.ts', text: "// fetched into /work/.mirror\n// an AI helper wrote this\n" },
      { file: 'README.md', text: 'a helper session of the project' },
    ]);
    assert.deepEqual(planted.map((f) => f.replace(/: .*/, '')), [
      'docs/x.md:1', 'docs/x.md', 'test/data/y/manifest.json:1', 'src/core/z.ts:2', 'test/unit/w.ts:2', 'test/unit/w.ts:1', 'README.md:1',
    ], planted.join('\n'));
    assert.match(planted[1], /"[^"]*\/tmp\/run1/, 'the prose path, not the examples');
  });
});
