import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { isHarnessJudge, outcomeFromHarnessJudge } from './harnessIn';
import { harnessGroup, isHarnessOutputNotJudge, readHarnessJudgeName } from './harnessLayout';
import { JudgeRecord } from '../judge/types';
import { runKeyForSession } from '../review';
import { outcomeFromRecord } from '../metrics/scores';
import type { TaskOutcome } from '../metrics/types';
import { errorMessage } from '../util/errors';
import { LIMITS, entryKind, kindWords, readUntrustedText, trimEndOf } from '../untrusted';

/**
 * Gathers the judged tasks under each folder: session folders (`private/judge/latest.json`) and
 * reference-harness judge JSON files (any `*.json` with `design_score` / `setup_score` /
 * `conclusion_score`). A session folder (one holding `workspace/` and `private/`, or a judge
 * record) counts only through its own judge record, and nothing else under it is read: not its
 * `private/` again (one judgement is never counted twice), not its `workspace/` nor its
 * `channel/` (the proctored window's folder), which whoever works in the session can write; a
 * session not judged yet is listed in `skipped`. Every file is read as untrusted
 * (src/core/untrusted/read.ts): a symbolic link is never followed, a FIFO or device never opened,
 * a file over `LIMITS.judgeFileBytes` not read; each is listed in `skipped` with the reason. Each folder is one group
 * (table row), named by its base name, except harness judge files named as the harness names
 * them (`<paperId>_task_index_<i>_iter_<k>_…_eval_judge.json`, harnessLayout.ts): their task id
 * is `<conference>/<paperId>/<i>` (conference from the folders, the config file beside, else
 * `conferenceOf`, else `unknown`) and their group is `<agent>/<model>` from the harness's folders
 * `…/<paperId>/<agent>/<model>/` or its config file (` iter <k>` added for repeats after the first).
 *
 * @param opts.conferenceOf the conference of a paper id (the CLI: from the loaded datasets); called only when the file does not say
 *
 * A run is counted once: copies of one session (one run key, {@link FoldedRun}) anywhere under the
 * folders given count as the newest judged copy, and are listed in `folded`.
 *
 * @returns outcomes, the files that were skipped with the reason (not a .json file, not JSON, not
 *   a record), and the runs whose copies were folded
 * @throws ExpBenchError BAD_INPUT naming a folder that does not exist
 */
export async function collectOutcomes(dirs: string[], opts: CollectOptions = {}): Promise<{ outcomes: TaskOutcome[]; skipped: { file: string; reason: string }[]; folded: FoldedRun[] }> {
  const outcomes: TaskOutcome[] = [];
  const skipped: { file: string; reason: string }[] = [];
  const runs = new Map<TaskOutcome, RunOf>();
  for (const dir of dirs) {
    const abs = path.resolve(dir);
    const st = await fsp.stat(abs).catch(() => undefined);
    if (!st) throw new ExpBenchError('BAD_INPUT', dir, 'folder or file does not exist');
    const group = path.basename(trimEndOf(abs, '\\/')).replace(/\.json$/, '');
    if (!st.isDirectory()) { await readOne(abs, group, outcomes, skipped, opts); continue; }
    await walk(abs, group, outcomes, skipped, 0, opts, runs);
  }
  const folded = foldCopies(outcomes, runs);
  return { outcomes: outcomes.filter((o) => !folded.dropped.has(o)), skipped, folded: folded.runs };
}

/**
 * Copies of one run counted once: the run key of a session (`runKeyForSession`: its manifest's
 * task, workspace commit and preparation time, the same for a copy or a move of the folder) seen
 * in more than one folder. `counted` is the judge record that counts (the newest by `createdAt`,
 * then the first found), `copies` the others' records.
 */
export interface FoldedRun {
  run: string;
  taskId: string;
  counted: string;
  copies: string[];
  /** True when the copies' judge records are not all the same judgement (another `createdAt`). */
  differ: boolean;
}

interface RunOf { key: string; createdAt: string }

function foldCopies(outcomes: TaskOutcome[], runs: Map<TaskOutcome, RunOf>): { runs: FoldedRun[]; dropped: Set<TaskOutcome> } {
  const byKey = new Map<string, TaskOutcome[]>();
  for (const o of outcomes) {
    const r = runs.get(o);
    if (r) byKey.set(r.key, [...(byKey.get(r.key) ?? []), o]);
  }
  const folded: FoldedRun[] = [];
  const dropped = new Set<TaskOutcome>();
  for (const [key, list] of byKey) {
    if (list.length < 2) continue;
    const kept = list.reduce((a, b) => (runs.get(b)!.createdAt > runs.get(a)!.createdAt ? b : a));
    const others = list.filter((o) => o !== kept);
    for (const o of others) dropped.add(o);
    folded.push({ run: key, taskId: kept.taskId, counted: kept.source, copies: others.map((o) => o.source), differ: others.some((o) => runs.get(o)!.createdAt !== runs.get(kept)!.createdAt) });
  }
  return { runs: folded, dropped };
}

export interface CollectOptions {
  /** The conference of a paper id, for harness files whose folders do not say it. */
  conferenceOf?: (paperId: string) => Promise<string | undefined>;
}

async function walk(dir: string, group: string, out: TaskOutcome[], skipped: { file: string; reason: string }[], depth: number, opts: CollectOptions, runs: Map<TaskOutcome, RunOf>): Promise<void> {
  if (depth > 8) return;
  const latest = path.join(dir, 'private', 'judge', 'latest.json');
  // Sorted: which copy of a run is found first does not depend on the file system's order.
  const entries = (await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const judged = await fsp.lstat(latest).then(() => true, () => false);
  const isSession = judged || (entries.some((e) => e.name === 'workspace' && e.isDirectory()) && entries.some((e) => e.name === 'private' && e.isDirectory()));
  if (judged) {
    const n = out.length;
    const rec = await readOne(latest, group, out, skipped, opts);
    const key = out.length > n && rec ? await runKeyForSession(dir).catch(() => undefined) : undefined;
    if (key && rec) runs.set(out[out.length - 1], { key, createdAt: rec.createdAt });
  }
  else if (isSession) skipped.push({ file: dir, reason: 'a session not judged yet (no private/judge/latest.json): run `expbench judge` on it; its workspace is never read for judge files' });
  // A session's folder is read only through its judge record: its workspace/ and channel/ are the solver's to write.
  if (isSession) return;
  for (const e of entries) {
    if (e.name === 'node_modules' || e.name === '.git') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await walk(p, group, out, skipped, depth + 1, opts, runs);
    else if (e.isFile() && e.name.endsWith('.json')) await readOne(p, group, out, skipped, opts, true);
    else if (e.name.endsWith('.json')) skipped.push({ file: p, reason: `${kindWords(entryKind(e))}, not a file: not read (a judge file is a regular file; links are never followed)` });
  }
}

/** Reads one file into `out` (or `skipped`); returns the judge record when it was one. */
async function readOne(file: string, group: string, out: TaskOutcome[], skipped: { file: string; reason: string }[], opts: CollectOptions, quietIfForeign = false): Promise<JudgeRecord | undefined> {
  // Judge records and harness judge files are .json: a file given by name that is not (an Inspect .eval zip, a .jsonl log) is not tried as JSON.
  if (!file.toLowerCase().endsWith('.json')) {
    skipped.push({ file, reason: 'not a judge file (a judge record or a reference-harness judge file is a .json file)' });
    return;
  }
  let text: string | undefined;
  try {
    text = await readUntrustedText(file, { maxBytes: LIMITS.judgeFileBytes, what: 'a judge file' });
  } catch (e) {
    skipped.push({ file, reason: errorMessage(e) });
    return;
  }
  if (text === undefined) { skipped.push({ file, reason: 'vanished while the folder was read' }); return; }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e: any) {
    skipped.push({ file, reason: `not JSON: ${errorMessage(e)}` });
    return;
  }
  const rec = JudgeRecord.safeParse(json);
  if (rec.success) { out.push(outcomeFromRecord(rec.data, group, file)); return rec.data; }
  if (isHarnessJudge(json) && isHarnessOutputNotJudge(file)) {
    // The agent's answers (`…_eval_gen.json`) and the run's config are the harness's other files: scores in them are not a judgement.
    skipped.push({ file, reason: 'a reference-harness file that is not its judge file (`…_eval_judge.json`): its score fields are not read as a judgement' });
    return undefined;
  }
  if (isHarnessJudge(json)) {
    const named = await readHarnessJudgeName(file);
    if (named && !named.conference && opts.conferenceOf) {
      const conference = await opts.conferenceOf(named.paperId);
      if (conference) named.conference = conference;
    }
    out.push(outcomeFromHarnessJudge(json, file, (named && harnessGroup(named)) ?? group, named));
    return undefined;
  }
  if (!quietIfForeign) skipped.push({ file, reason: 'neither a judge record nor a harness judge file' });
  return undefined;
}
