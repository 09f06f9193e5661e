import * as path from 'node:path';
import { errorMessage } from '../util/errors';
import { isExpBenchError } from '../errors';
import { log } from '../log';
import { loadDatasets } from '../tasks/loader';
import type { LoadResult, Severity, Task } from '../tasks/types';
import { CURATION_FILE, readCurationFile } from './curationFile';
import { fileRuleFindings } from './fileRules';
import { repoRuleFindings } from './repoRules';
import { openSnapshot, type RepoSnapshot } from './snapshot';
import { selectTaskFiles } from './taskFiles';
import { LINT_RULES, type LintFinding, type LintReport, type LintRule, type Unreadable } from './types';

const logger = log('curation.lint');

/** Options of {@link lintTasks}. */
export interface LintOptions {
  /** Dataset folders or task files (`.json`; `.jsonl` paper lists are read for the paper join). */
  inputs: string[];
  /**
   * The paper's repository (a git URL, a local clone or a folder) for the repository rules; every
   * linted task is taken to belong to it. Without it, each paper whose curation file pins a
   * repository is checked at that pin, and the others get only the file rules.
   */
  source?: string;
  /** Commit of `source` the tasks hold at (default: its HEAD). */
  commit?: string;
  /** Pristine clone cache (default: the workspace's, `~/.cache/expbench/pristine`). */
  cacheDir?: string;
  /** A snapshot already read (instead of `source`), for callers that lint several times. */
  snapshot?: RepoSnapshot;
  signal?: AbortSignal;
}

/**
 * The task lint (docs/curation.md): picks one task file per paper (taskFiles.ts), loads it with
 * the task loader, runs the file rules, checks each paper's curation file (curationFile.ts), and
 * runs the repository rules at the given source or at the curation files' pins. Never throws on
 * bad input: a folder that does not exist, a task file that is not JSON, JSON that is no task file
 * (no `questions` array), a source that cannot be had is an entry of `unreadable` (the CLI's exit code 2), and the rest is linted.
 *
 * @throws ExpBenchError `CANCELLED` when `signal` fires.
 */
export async function lintTasks(o: LintOptions): Promise<LintReport> {
  const selection = await selectTaskFiles(o.inputs);
  const unreadable: Unreadable[] = [...selection.unreadable];
  const loaded = await loadDatasets([...selection.taskFiles, ...selection.paperLists]);
  for (const f of loaded.unreadableFiles) {
    const p = loaded.problems.find((x) => x.file === f && x.pointer === '');
    unreadable.push({ input: f, message: p?.message ?? 'cannot be read' });
  }
  const findings: LintFinding[] = [...selection.findings, ...notLoaded(selection.taskFiles, selection.paperLists, loaded), ...fileRuleFindings(loaded.tasks)];
  // JSON that is no task file (no `questions` array, e.g. `{"hello":1}`, `[…]`) holds nothing to lint: an unreadable input, not a silent 0.
  for (const f of selection.taskFiles) {
    if (loaded.unreadableFiles.includes(f)) continue;
    const p = loaded.problems.find((x) => x.file === f && x.severity === 'error' && (x.pointer === '' || x.pointer === '/questions') && !SECOND_FILE.test(x.message));
    if (p) unreadable.push({ input: f, message: `not a task file: ${p.message}` });
  }
  const repositories: LintReport['repositories'] = [];
  const open = async (source: string, commit: string | undefined): Promise<RepoSnapshot | undefined> => {
    try {
      return await openSnapshot({ source, commit, cacheDir: o.cacheDir, signal: o.signal });
    } catch (e) {
      if (isExpBenchError(e, 'CANCELLED')) throw e;
      unreadable.push({ input: source, message: `repository rules not run: ${errorMessage(e)}` });
      return undefined;
    }
  };
  // Curation files: checked always; their pins are used when no source is given.
  const papers = new Map<string, Task[]>();
  for (const t of loaded.tasks) papers.set(path.dirname(t.file), [...(papers.get(path.dirname(t.file)) ?? []), t]);
  const pins: Array<{ paper: string; tasks: Task[]; url: string; commit: string }> = [];
  for (const [dir, tasks] of papers) {
    const paper = `${tasks[0].conference}/${tasks[0].paperId}`;
    const read = await readCurationFile(path.join(dir, CURATION_FILE), paper);
    if (!read) continue;
    for (const p of read.problems) findings.push({ ...p, rule: 'curation-file' });
    if (read.curation?.repository) pins.push({ paper, tasks, ...read.curation.repository });
  }
  const check = async (tasks: Task[], snap: RepoSnapshot, source: string): Promise<void> => {
    try {
      findings.push(...await repoRuleFindings(tasks, snap));
    } catch (e) {
      if (isExpBenchError(e, 'CANCELLED')) throw e;
      unreadable.push({ input: source, message: `repository rules stopped: ${errorMessage(e)}` });
    }
  };
  const given = o.snapshot ?? (o.source !== undefined ? await open(o.source, o.commit) : undefined);
  if (given) {
    repositories.push({ source: o.source ?? given.repo, commit: given.commit, ...absentOf(given) });
    await check(loaded.tasks, given, o.source ?? given.repo);
  } else if (o.source === undefined) {
    for (const pin of pins) {
      const snap = await open(pin.url, pin.commit);
      if (!snap) continue;
      repositories.push({ source: pin.url, commit: snap.commit, paper: pin.paper, ...absentOf(snap) });
      await check(pin.tasks, snap, pin.url);
    }
  }
  findings.sort(byPlace);
  const counts = Object.fromEntries(Object.keys(LINT_RULES).map((r) => [r, 0])) as Record<LintRule, number>;
  const bySeverity: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const f of findings) { counts[f.rule]++; bySeverity[f.severity]++; }
  logger.info(`linted ${loaded.tasks.length} tasks in ${selection.taskFiles.length} files: ${findings.length} findings, ${unreadable.length} unreadable inputs`);
  return { files: selection.taskFiles, tasks: loaded.tasks.length, findings, counts, bySeverity, unreadable, repositories };
}

const absentOf = (snap: RepoSnapshot) => (snap.absent.length ? { absent: snap.absent.length } : {});

/** The loader's message for a second task file of one paper (loader.ts), which is a finding, not an unreadable input. */
const SECOND_FILE = /^second task file for paper /;

/**
 * Rule `not-loaded`: what the task loader (the `tasks validate` check) reports and the other rules
 * cannot, because nothing of it was loaded: every loader error in a linted task file or paper list
 * except the file-level ones that make the file unreadable (not JSON, no `questions` array: see
 * {@link lintTasks}) — a second task file of one paper, an entry nested past the limit, an entry
 * that is no object, a paper-list line that is not JSON — and a task file whose `questions` is
 * empty (a warning). The loader's message is quoted, at the loader's pointer.
 */
function notLoaded(taskFiles: string[], paperLists: string[], loaded: LoadResult): LintFinding[] {
  const linted = new Set([...taskFiles, ...paperLists]);
  const out: LintFinding[] = [];
  for (const p of loaded.problems) {
    if (!linted.has(p.file) || loaded.unreadableFiles.includes(p.file)) continue;
    const fileLevel = (p.pointer === '' || p.pointer === '/questions') && !SECOND_FILE.test(p.message);
    const empty = p.severity === 'warning' && p.pointer === '/questions' && p.message.startsWith('"questions" is empty');
    if (empty) out.push({ file: p.file, pointer: p.pointer, rule: 'not-loaded', severity: 'warning', message: `the file holds no task: ${p.message}` });
    else if (p.severity === 'error' && !fileLevel) {
      const what = SECOND_FILE.test(p.message) ? 'the file is not loaded' : paperLists.includes(p.file) ? 'the paper-list line is not loaded' : 'the task loader reports';
      out.push({ file: p.file, pointer: p.pointer, rule: 'not-loaded', severity: 'error', message: `${what}: ${p.message}` });
    }
  }
  return out;
}

const ORDER = new Intl.Collator('en', { numeric: true });

function byPlace(a: LintFinding, b: LintFinding): number {
  return ORDER.compare(a.file, b.file) || ORDER.compare(a.pointer, b.pointer) || a.rule.localeCompare(b.rule);
}
