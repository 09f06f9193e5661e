import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { isHarnessJudge, outcomeFromHarnessJudge } from './harnessIn';
import { JudgeRecord } from '../judge/types';
import { outcomeFromRecord } from '../metrics/scores';
import type { TaskOutcome } from '../metrics/types';
import { errorMessage } from '../util/errors';

/**
 * Gathers the judged tasks under each folder: session folders (`private/judge/latest.json`) and
 * reference-harness judge JSON files (any `*.json` with `design_score` / `setup_score` /
 * `conclusion_score`). A session folder (one holding `workspace/` and `private/`, or a judge
 * record) counts only through its own judge record: its `private/` is not searched again (one
 * judgement is never counted twice) and its `workspace/` never is (whoever works in it can write
 * any file there); a session not judged yet is listed in `skipped`. Each folder is one group
 * (table row), named by its base name.
 *
 * @returns outcomes and the files that were skipped with the reason (not JSON, not a record)
 * @throws ExpBenchError BAD_INPUT naming a folder that does not exist
 */
export async function collectOutcomes(dirs: string[]): Promise<{ outcomes: TaskOutcome[]; skipped: { file: string; reason: string }[] }> {
  const outcomes: TaskOutcome[] = [];
  const skipped: { file: string; reason: string }[] = [];
  for (const dir of dirs) {
    const abs = path.resolve(dir);
    const st = await fsp.stat(abs).catch(() => undefined);
    if (!st) throw new ExpBenchError('BAD_INPUT', dir, 'folder or file does not exist');
    const group = path.basename(abs.replace(/[\\/]+$/, '')).replace(/\.json$/, '');
    if (st.isFile()) { await readOne(abs, group, outcomes, skipped); continue; }
    await walk(abs, group, outcomes, skipped, 0);
  }
  return { outcomes, skipped };
}

async function walk(dir: string, group: string, out: TaskOutcome[], skipped: { file: string; reason: string }[], depth: number): Promise<void> {
  if (depth > 8) return;
  const latest = path.join(dir, 'private', 'judge', 'latest.json');
  const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
  const judged = await fsp.access(latest).then(() => true, () => false);
  const isSession = judged || (entries.some((e) => e.name === 'workspace' && e.isDirectory()) && entries.some((e) => e.name === 'private' && e.isDirectory()));
  if (judged) await readOne(latest, group, out, skipped);
  else if (isSession) skipped.push({ file: dir, reason: 'a session not judged yet (no private/judge/latest.json): run `expbench judge` on it; its workspace is never read for judge files' });
  for (const e of entries) {
    if (e.name === 'node_modules' || e.name === '.git' || e.name === 'workspace' && isSession) continue;
    if (isSession && e.name === 'private') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await walk(p, group, out, skipped, depth + 1);
    else if (e.isFile() && e.name.endsWith('.json')) await readOne(p, group, out, skipped, true);
  }
}

async function readOne(file: string, group: string, out: TaskOutcome[], skipped: { file: string; reason: string }[], quietIfForeign = false): Promise<void> {
  let json: unknown;
  try {
    json = JSON.parse(await fsp.readFile(file, 'utf8'));
  } catch (e: any) {
    skipped.push({ file, reason: `not JSON: ${errorMessage(e)}` });
    return;
  }
  const rec = JudgeRecord.safeParse(json);
  if (rec.success) { out.push(outcomeFromRecord(rec.data, group, file)); return; }
  if (isHarnessJudge(json)) { out.push(outcomeFromHarnessJudge(json, file, group)); return; }
  if (!quietIfForeign) skipped.push({ file, reason: 'neither a judge record nor a harness judge file' });
}
