/**
 * Benchmark: the chance-match rate of derived claims (issue 14, part 4). How often does a random
 * number, of the same precision as a claim, come out "derived" (not printed, but computed from two
 * printed numbers by src/core/verify/derived.ts) on REAL run outputs? A check that almost
 * anything passes cannot fail; the rate says how much a "derived" verdict is worth.
 *
 * Outputs (each one group, as the verifier sees one run):
 * - the sample task's real solution run in the sandbox container (`expbench/sandbox:1`, no
 *   network): its stdout and results/temperature_scaling.json;
 * - the EXP-Bench harness records in ../shared/data/trajectories/exp-bench/ (each record's patch
 *   added lines, answers and judge file: the only outputs those records keep);
 * - every file of the folders in env BENCH_CLAIMS_OUTPUTS (':'-separated; one group per folder),
 *   for run outputs made elsewhere (e.g. a paper task's run);
 * - the real agent trajectories in ../shared/data/trajectories (every format the importers read):
 *   the observations of each trajectory's steps (command outputs: test runs, scripts, logs), one
 *   group per trajectory;
 * - committed run outputs of public repositories (env BENCH_CLAIMS_REPOS: ':'-separated bare git
 *   directories, as the `fetch` of a repository leaves them; never committed here): every file at
 *   HEAD of at most 1 MiB named like a log or a results file (`*.log`, `*.out`, `*log*.txt`,
 *   `*result*.txt`, `logs/*.txt`) and the outputs of every notebook (`*.ipynb`: stream and
 *   `text/plain` outputs), one group per file.
 *
 * For each group and each precision (`12.3%`, `12%`, `1.23`, `0.123`, `2.5x`), N random values
 * (env BENCH_CLAIMS_N, default 1000; env BENCH_CLAIMS_RULES picks rule sets; uniform: % in [0, 100), 1.23 in [0, 10), 0.123 in [0, 1),
 * x in [1, 20)) that are not printed (not "found") are searched, under three rule sets: none
 * (every operation of the unit, every pair), `sameLabel` only, `named` (the default without
 * `sourcesStated`) and the default (DERIVED_RULES: the conclusion states the random labelled
 * number and one number of the same quantity under another label, as a comparison does).
 * The claim's sentence names the quantity of a random labelled number of the group and has the
 * change words of every operation (the least restrictive sentence a real claim could have). Prints the rates and writes them to the bench result.
 */
import { mulberry32 } from '../src/core/metrics/bootstrap';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { matchesClaim } from '../src/core/verify/claims';
import { DERIVED_RULES, derivedInputs, findDerived, sameQuantity, type DerivedRules } from '../src/core/verify/derived';
import { labelKey, labelNamed, namingOf, producedNumbers, type ProducedNumber } from '../src/core/verify/produced';
import { git } from '../src/core/git';
import { importFiles } from '../src/core/trajectory/import';

const exec = promisify(execFile);
const REPO = path.resolve(__dirname, '..', '..');
const N = Number(process.env.BENCH_CLAIMS_N ?? 1000);
const TRAJECTORIES = process.env.BENCH_TRAJECTORIES ?? path.resolve(REPO, '..', 'shared', 'data', 'trajectories');
const HARNESS = path.join(TRAJECTORIES, 'exp-bench');

interface Group { name: string; numbers: ProducedNumber[] }

async function sampleRun(): Promise<Group> {
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-claims-bench-'));
  try {
    await fsp.cp(path.join(REPO, 'samples', 'repos', 'toy-calibration'), tmp, { recursive: true });
    await fsp.copyFile(path.join(REPO, 'samples', 'solutions', 'toy-calibration', 'temperature_scaling.py'), path.join(tmp, 'experiments', 'temperature_scaling.py'));
    await fsp.chmod(tmp, 0o777);
    const r = await exec('docker', ['run', '--rm', '--network', 'none', '-u', `${process.getuid?.() ?? 1000}`, '-v', `${tmp}:/workspace`, '-w', '/workspace',
      'expbench/sandbox:1', 'python3', 'experiments/temperature_scaling.py']);
    const json = await fsp.readFile(path.join(tmp, 'results', 'temperature_scaling.json'), 'utf8');
    return { name: 'sample/toycal/0 (sandbox run)', numbers: [...producedNumbers('stdout', r.stdout, 's'), ...producedNumbers('results/temperature_scaling.json', json, 's')] };
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true });
  }
}

async function harnessRecords(): Promise<Group[]> {
  const out: Group[] = [];
  const files = (await fsp.readdir(HARNESS, { recursive: true }).catch(() => [] as string[])).map((f) => path.join(HARNESS, f));
  const byRecord = new Map<string, string[]>();
  for (const f of files) {
    const m = /^(.*_task_index_\d+_iter_\d+)/.exec(path.basename(f));
    if (m) byRecord.set(path.join(path.dirname(f), m[1]), [...(byRecord.get(path.join(path.dirname(f), m[1])) ?? []), f]);
  }
  for (const [rec, fs] of byRecord) {
    const numbers: ProducedNumber[] = [];
    for (const f of fs) {
      let text = await fsp.readFile(f, 'utf8');
      if (f.endsWith('.patch')) text = text.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++')).map((l) => l.slice(1)).join('\n');
      numbers.push(...producedNumbers(path.basename(f), text, rec));
    }
    out.push({ name: `harness ${path.relative(HARNESS, rec)}`, numbers });
  }
  return out;
}

async function extraFolders(): Promise<Group[]> {
  const out: Group[] = [];
  for (const d of (process.env.BENCH_CLAIMS_OUTPUTS ?? '').split(':').filter(Boolean)) {
    const numbers: ProducedNumber[] = [];
    for (const f of await fsp.readdir(d)) numbers.push(...producedNumbers(f, await fsp.readFile(path.join(d, f), 'utf8'), d));
    out.push({ name: `outputs ${d}`, numbers });
  }
  return out;
}

async function trajectories(): Promise<Group[]> {
  const out: Group[] = [];
  const files = (await fsp.readdir(TRAJECTORIES, { recursive: true }).catch(() => [] as string[]))
    .map((f) => path.join(TRAJECTORIES, f)).filter((f) => !f.includes(`${path.sep}exp-bench${path.sep}`) && /\.(json|jsonl|traj|eval)$/.test(f));
  await importFiles(files, (t) => {
    const numbers: ProducedNumber[] = [];
    t.steps.forEach((st, i) => { if (st.observation?.text) numbers.push(...producedNumbers(`step ${i}`, st.observation.text, t.id)); });
    if (numbers.length) out.push({ name: `trajectory ${path.relative(TRAJECTORIES, t.file)}#${t.id}`, numbers });
  });
  return out;
}

/** A committed file named like a run's output (module docs). */
const RUN_OUTPUT = /(?:\.log|\.out|(?:^|\/)[^/]*log[^/]*\.txt|(?:^|\/)[^/]*results?[^/]*\.txt|(?:^|\/)logs?\/[^/]*\.txt|\.ipynb)$/i;

/** The text outputs of a notebook's cells (stream text and `text/plain`), one line per line. */
function notebookOutputs(json: string): string {
  try {
    const nb = JSON.parse(json) as { cells?: Array<{ outputs?: Array<{ text?: string | string[]; data?: Record<string, string | string[]> }> }> };
    const join = (x: string | string[] | undefined) => (Array.isArray(x) ? x.join('') : x ?? '');
    return (nb.cells ?? []).flatMap((c) => (c.outputs ?? []).map((o) => join(o.text) + join(o.data?.['text/plain']))).join('\n');
  } catch {
    return '';
  }
}

async function repositoryOutputs(): Promise<Group[]> {
  const out: Group[] = [];
  for (const repo of (process.env.BENCH_CLAIMS_REPOS ?? '').split(':').filter(Boolean)) {
    const listing = await git(['ls-tree', '-r', '-z', '-l', 'HEAD'], { repo: { gitDir: repo } }).catch(() => undefined);
    if (!listing) { console.log(`claims.bench: ${repo}: not a git directory, skipped`); continue; }
    const name = path.basename(repo) === 'repo' ? path.basename(path.dirname(repo)) : path.basename(repo);
    for (const rec of listing.text.split('\0')) {
      const m = /^\d+ blob ([0-9a-f]+)\s+(\d+)\t(.*)$/s.exec(rec);
      if (!m || Number(m[2]) > 1024 * 1024 || !RUN_OUTPUT.test(m[3])) continue;
      let text = (await git(['cat-file', 'blob', m[1]], { repo: { gitDir: repo } })).text;
      if (m[3].endsWith('.ipynb')) text = notebookOutputs(text);
      const numbers = producedNumbers(m[3], text, `${name}:${m[3]}`);
      if (numbers.length) out.push({ name: `repository ${name}: ${m[3]}`, numbers });
    }
  }
  return out;
}

const PRECISIONS: Array<{ name: string; unit?: string; decimals: number; lo: number; hi: number }> = [
  { name: '12.3%', unit: '%', decimals: 1, lo: 0, hi: 100 },
  { name: '12%', unit: '%', decimals: 0, lo: 0, hi: 100 },
  { name: '1.23', decimals: 2, lo: 0, hi: 10 },
  { name: '0.123', decimals: 3, lo: 0, hi: 1 },
  { name: '2.5x', unit: 'x', decimals: 1, lo: 1, hi: 20 },
];

/** A seeded PRNG so runs are comparable: the metrics room's mulberry32. */
const rng = mulberry32;

const ALL_RULESETS: Array<{ name: string; rules: DerivedRules }> = [
  { name: 'none', rules: { requireWord: false, sameLabel: false, requireNamed: false, sourcesStated: false } },
  { name: 'sameLabel', rules: { requireWord: false, sameLabel: true, requireNamed: false, sourcesStated: false } },
  { name: 'named', rules: { ...DERIVED_RULES, sourcesStated: false } },
  { name: 'default', rules: DERIVED_RULES },
];
/** The rule sets measured (env BENCH_CLAIMS_RULES, ','-separated names; default all: `none` over 400 inputs is the slow one). */
const RULESETS = ALL_RULESETS.filter((r) => !process.env.BENCH_CLAIMS_RULES || process.env.BENCH_CLAIMS_RULES.split(',').includes(r.name));
/** The change words of every operation: the claim's sentence is the least restrictive one. */
const CHANGE = 'shows a reduction, a difference, 2 times more';

export async function run(): Promise<unknown> {
  const groups: Group[] = [];
  try { groups.push(await sampleRun()); } catch (e) { console.log(`claims.bench: sample run skipped (${e instanceof Error ? e.message.split('\n')[0] : e})`); }
  groups.push(...(await harnessRecords()), ...(await extraFolders()), ...(await trajectories()), ...(await repositoryOutputs()));
  const results: Array<Record<string, unknown>> = [];
  const totals = new Map<string, { derived: number; tried: number }>();
  for (const g of groups) {
    const inputs = derivedInputs(g.numbers);
    const row: Record<string, unknown> = { group: g.name, numbers: g.numbers.length, inputs: inputs.length };
    for (const rs of RULESETS) {
      let derived = 0;
      let tried = 0;
      const rand = rng(14);
      const labelled = inputs.filter((n) => n.labelWords.length > 0);
      const peerCache = new Map<ProducedNumber, ProducedNumber[]>();
      for (const p of PRECISIONS) {
        let pd = 0;
        let pt = 0;
        for (let i = 0; i < N; i++) {
          const value = Number((p.lo + rand() * (p.hi - p.lo)).toFixed(p.decimals));
          // the sentence names the quantity of a random labelled number of the run (as a real claim would)
          const q = labelled[Math.floor(rand() * labelled.length)];
          // the conclusion states q and one more number of its quantity under another label or another condition (a comparison), when there is one
          const peers = q ? peerCache.get(q) ?? peerCache.set(q, labelled.filter((n) => n !== q && n.value !== q.value && sameQuantity(q, n))).get(q)! : [];
          const q2 = peers.length ? peers[Math.floor(rand() * peers.length)] : undefined;
          const sentence = `The ${q?.label ?? 'value'} ${CHANGE}`;
          const claim = { value, unit: p.unit, decimals: p.decimals, sentence };
          if (g.numbers.some((n) => matchesClaim(claim, n))) continue; // printed: found, not derived
          pt++;
          const naming = namingOf(sentence);
          const named = (n: ProducedNumber) => labelNamed(n.label, n.labelWords, naming);
          const stated = (n: ProducedNumber) => n.value === q?.value || n.value === q2?.value;
          const keyNamed = (key: string) => labelKey(key).split(' ').every((w) => naming.plain.has(w));
          if (findDerived(claim, inputs, rs.rules, named, labelled.some(named), stated, keyNamed)) pd++;
        }
        derived += pd;
        tried += pt;
        if (rs.name === 'default') row[`default ${p.name}`] = pt ? Number((pd / pt).toFixed(4)) : null;
      }
      row[rs.name] = tried ? Number((derived / tried).toFixed(4)) : null;
      const t = totals.get(rs.name) ?? { derived: 0, tried: 0 };
      totals.set(rs.name, { derived: t.derived + derived, tried: t.tried + tried });
    }
    results.push(row);
    console.log(`claims.bench: ${g.name}: ${g.numbers.length} numbers (${inputs.length} inputs); chance-match rate ${RULESETS.map((r) => `${r.name} ${((row[r.name] as number) * 100).toFixed(1)}%`).join(', ')}`
      + ` (default by precision: ${PRECISIONS.map((p) => `${p.name} ${(((row[`default ${p.name}`] as number) ?? 0) * 100).toFixed(1)}%`).join(', ')})`);
  }
  const overall = Object.fromEntries([...totals].map(([k, t]) => [k, t.tried ? Number((t.derived / t.tried).toFixed(4)) : null]));
  console.log(`claims.bench: overall (${N} random values per precision and group): ${Object.entries(overall).map(([k, v]) => `${k} ${((v ?? 0) * 100).toFixed(1)}%`).join(', ')}`);
  return { n: N, groups: results, overall };
}
