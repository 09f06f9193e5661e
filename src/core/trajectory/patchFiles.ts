/** A patch split per file (harness `.patch` files, the final submissions of SWE-agent, OpenHands, mini-swe-agent). */

export interface FileDiff { path: string; rawPath: string; line: number; text: string; op: string; cut?: string }

/** Splits a `diff -urN` / `git diff` text into per-file diffs, with host paths reduced and cut hunks flagged. */
export function splitDiff(text: string): FileDiff[] {
  const lines = text.split('\n');
  const out: FileDiff[] = [];
  let cur: { start: number; lines: string[] } | undefined;
  const flush = () => { if (cur) out.push(describe(cur.lines, cur.start)); cur = undefined; };
  lines.forEach((l, i) => {
    const header = /^diff /.test(l);
    const minus = /^--- /.test(l) && /^\+\+\+ /.test(lines[i + 1] ?? '');
    const awaitingMinus = !!cur && /^diff /.test(cur.lines[0]) && !cur.lines.some((x) => x.startsWith('--- '));
    if (header || (minus && !awaitingMinus)) { flush(); cur = { start: i + 1, lines: [] }; }
    cur?.lines.push(l);
  });
  flush();
  return out;
}

function describe(lines: string[], start: number): FileDiff {
  const minus = lines.find((l) => l.startsWith('--- '))?.slice(4).split('\t')[0] ?? '';
  const plus = lines.find((l) => l.startsWith('+++ '))?.slice(4).split('\t')[0] ?? '';
  const pick = minus && minus !== '/dev/null' ? minus : plus;
  const p = pick.replace(/^[ab]\//, '').replace(/^.*?\/workspace\//, 'workspace/').replace(/^workspace\/[^/]+\//, '');
  const op = minus === '/dev/null' || lines.some((l) => /^@@ -0,0 /.test(l)) ? 'create' : plus === '/dev/null' || lines.some((l) => / \+0,0 @@/.test(l)) ? 'delete' : 'edit';
  let cut: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const h = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(lines[i]);
    if (!h) continue;
    let old = h[1] === undefined ? 1 : Number(h[1]); let neu = h[2] === undefined ? 1 : Number(h[2]);
    let j = i + 1;
    for (; j < lines.length && (old > 0 || neu > 0); j++) {
      const c = lines[j][0];
      if (c === ' ') { old--; neu--; } else if (c === '-') old--; else if (c === '+') neu--; else if (c === '\\') continue; else break;
    }
    if (old > 0 || neu > 0) { cut = `hunk at line ${start + i} is short of ${Math.max(old, 0)} old and ${Math.max(neu, 0)} new line(s): the patch was cut or damaged and will not apply`; break; }
    i = j - 1;
  }
  return { path: p || '(unknown)', rawPath: pick, line: start, text: lines.join('\n'), op, ...(cut ? { cut } : {}) };
}

