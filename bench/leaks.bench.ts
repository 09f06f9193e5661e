/**
 * Benchmark: the finding rate of the lint's `leak-expected-number` on real repositories (issue 33:
 * short expected numbers are leak-checked; "the rate of findings on the shared papers'
 * repositories reported, noise must stay low"). Not a speed figure: how many tasks the rule flags,
 * split by kind, with every finding's message written out for reading by hand.
 *
 * Input: env BENCH_LEAK_PAPERS, a file of lines `<paper task folder>\t<repository>` (a bare git
 * directory as `fetch` leaves it, a clone or a URL; never committed here). Each paper is linted
 * with its repository at HEAD (`lintTasks`, file and repository rules; cache in a temporary
 * folder). A finding is **short** when its message names company (`with the outcome's …` or
 * `with its context words …`, leakNumbers.ts), otherwise **distinctive**.
 *
 * Prints per paper: tasks, tasks with a finding (short / distinctive), time; then the totals and
 * rates, and writes the messages to test-results/leaks-bench.txt.
 */
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { lintTasks } from '../src/core/curation/lint';

const REPO = path.resolve(__dirname, '..', '..');

interface Row { paper: string; tasks: number; short: number; distinctive: number; flagged: number; ms: number; error?: string }

export async function run(): Promise<unknown> {
  const list = process.env.BENCH_LEAK_PAPERS;
  if (!list) { console.log('leaks.bench: BENCH_LEAK_PAPERS not set (a file of "<paper folder>\\t<repository>" lines): skipped'); return { skipped: true }; }
  const pairs = (await fsp.readFile(list, 'utf8')).split('\n').map((l) => l.split('\t')).filter((p) => p.length >= 2 && p[0] && p[1]);
  const cache = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-leaks-bench-'));
  const rows: Row[] = [];
  const messages: string[] = [];
  try {
    for (const [dir, source] of pairs) {
      const paper = path.relative(path.dirname(path.dirname(dir)), dir);
      const t0 = performance.now();
      try {
        const r = await lintTasks({ inputs: [dir], source, cacheDir: cache });
        const f = r.findings.filter((x) => x.rule === 'leak-expected-number');
        const isShort = (m: string) => / with (?:the outcome's|its context words) /.test(m);
        const byKind = (short: boolean) => new Set(f.filter((x) => isShort(x.message) === short).map((x) => x.task)).size;
        rows.push({ paper, tasks: r.tasks, short: byKind(true), distinctive: byKind(false), flagged: new Set(f.map((x) => x.task)).size, ms: performance.now() - t0,
          ...(r.unreadable.length ? { error: r.unreadable.map((u) => u.message).join('; ') } : {}) });
        for (const x of f) messages.push(`${x.task} [${isShort(x.message) ? 'short' : 'distinctive'}] ${x.message}`);
      } catch (e) {
        rows.push({ paper, tasks: 0, short: 0, distinctive: 0, flagged: 0, ms: performance.now() - t0, error: e instanceof Error ? e.message.split('\n')[0] : String(e) });
      }
      const r = rows[rows.length - 1];
      console.log(`leaks.bench: ${paper}: ${r.tasks} tasks, ${r.flagged} flagged (${r.short} short, ${r.distinctive} distinctive) in ${(r.ms / 1000).toFixed(1)} s${r.error ? `; ${r.error}` : ''}`);
    }
  } finally {
    await fsp.rm(cache, { recursive: true, force: true });
  }
  const sum = (k: 'tasks' | 'short' | 'distinctive' | 'flagged') => rows.reduce((a, r) => a + r[k], 0);
  const tasks = sum('tasks');
  const pct = (n: number) => `${tasks ? ((n / tasks) * 100).toFixed(1) : '0.0'}%`;
  console.log(`leaks.bench: ${rows.length} papers, ${tasks} tasks: ${sum('flagged')} flagged (${pct(sum('flagged'))}); short ${sum('short')} (${pct(sum('short'))}), distinctive ${sum('distinctive')} (${pct(sum('distinctive'))}); load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const out = path.join(REPO, 'test-results', 'leaks-bench.txt');
  await fsp.mkdir(path.dirname(out), { recursive: true });
  await fsp.writeFile(out, messages.join('\n') + '\n');
  return { rows, tasks, flagged: sum('flagged'), short: sum('short'), distinctive: sum('distinctive') };
}
