import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ReviewStore, runKeyForFile, runKeyForSession, type Judgement } from '../../../core/review';
import type { PriceTable } from '../../../core/llm/ledger';
import type { Task } from '../../../core/tasks/types';
import type { Trajectory } from '../../../core/trajectory/types';
import type { TrajJudgement, TrajPin } from '../../../protocol/trajectory';
import { sessionDirOf } from './detail';

/** The commands of the repository at a step; the buttons show when they are registered and can work on the run. */
const REPOSITORY_COMMANDS = ['expbench.trajectory.openRepositoryAtStep', 'expbench.trajectory.compareSteps', 'expbench.trajectory.showStepDiff'];

/**
 * What the viewer shows besides the trajectory: pins (verdicts and flags on steps), human review
 * judgements (src/core/review: one file per judgement), and whether the repository commands exist.
 */
export interface ViewerExtras {
  pins(file: string, t: Trajectory): Promise<Map<number, TrajPin[]>>;
  judgements(file: string, t: Trajectory): Promise<Map<number, TrajJudgement[]>>;
  /** Stores one judgement on step `step`; returns a sentence saying what was stored. */
  review(file: string, t: Trajectory, step: number, kind: 'comment' | 'tag' | 'score' | 'invalid', value: string, reason?: string): Promise<string>;
  /** What the viewer can do for trajectory `t` of `file`; the repository commands only where they can work (a session's log, or a run on a task of the configured datasets), else why not. */
  can(file: string, t: Trajectory | undefined): Promise<{ pins: boolean; review: boolean; repository: boolean; repositoryWhy?: string }>;
  /** The price table (`expbench.llm.prices`) for calls whose log states no cost. */
  prices(): PriceTable;
  /** A `vscode://` link that opens `uri` at `step`. */
  link(uri: vscode.Uri, step: number): string;
}

/**
 * The review store's folder: `<first workspace folder>/.expbench-review`, else `~/.expbench/review`
 * (the default of the setting `expbench.review.folder`, docs/review.md).
 */
export function defaultReviewFolder(): string {
  const ws = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return ws ? path.join(ws, '.expbench-review') : path.join(os.homedir(), '.expbench', 'review');
}

/** The run key of a file's trajectory: its session's key for `<session>/private/events.jsonl`, else the file's SHA-256 and the trajectory id. */
export async function runKeyOf(file: string, t: Trajectory): Promise<string> {
  const dir = sessionDirOf(file);
  if (dir) { try { return await runKeyForSession(dir); } catch { /* not a prepared session: by content */ } }
  return runKeyForFile(await sha256File(file), t.id);
}

async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  // 1 MiB reads: a large log is hashed in few turns of the event loop (while an import shares it)
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? String(v));

/** The extras of this window: the review store in `reviewFolder()`; pins once a pin source is given. */
export function viewerExtras(opts: { reviewFolder: () => string; extensionId: string; pins?: (file: string, t: Trajectory) => Promise<TrajPin[]>; findTask?: (id: string) => Promise<Task | undefined>; prices?: () => PriceTable }): ViewerExtras {
  const keys = new Map<string, Promise<string>>();
  const keyOf = (file: string, t: Trajectory) => {
    const k = `${file}\0${t.id}`;
    let p = keys.get(k);
    if (!p) { p = runKeyOf(file, t); keys.set(k, p); p.catch(() => keys.delete(k)); }
    return p;
  };
  return {
    async pins(file, t) {
      const out = new Map<number, TrajPin[]>();
      for (const p of (await opts.pins?.(file, t)) ?? []) out.set(p.step, [...(out.get(p.step) ?? []), p]);
      return out;
    },
    async judgements(file, t) {
      const run = await keyOf(file, t);
      const all = await new ReviewStore(opts.reviewFolder()).list({ run });
      const out = new Map<number, TrajJudgement[]>();
      for (const j of all) {
        if (j.subject.kind !== 'run' || j.subject.step === undefined) continue;
        out.set(j.subject.step, [...(out.get(j.subject.step) ?? []), view(j)]);
      }
      return out;
    },
    async review(file, t, step, kind, value, reason) {
      const run = await keyOf(file, t);
      const v: unknown = kind === 'score' ? Number(value) : kind === 'invalid' ? value !== 'false' : value;
      const j = await new ReviewStore(opts.reviewFolder()).add({ subject: { kind: 'run', run, step }, kind, value: v, reason: reason || undefined });
      return `${kind} ${text(j.value)} on step ${step} by ${j.by}${j.before !== undefined ? ` (was ${text(j.before)})` : ''}`;
    },
    async can(file, t) {
      const all = new Set(await vscode.commands.getCommands(true));
      const base = { pins: opts.pins !== undefined, review: true };
      if (!REPOSITORY_COMMANDS.every((c) => all.has(c))) return { ...base, repository: false, repositoryWhy: 'the repository commands are not available in this window' };
      if (sessionDirOf(file)) return { ...base, repository: true };
      if (!t?.task) return { ...base, repository: false, repositoryWhy: `this ${t?.format ?? ''} run names no EXP-Bench task: import it as a session ("Import as Session…") to see its repository at a step` };
      const task = opts.findTask ? await opts.findTask(t.task).catch(() => undefined) : undefined;
      if (!task) return { ...base, repository: false, repositoryWhy: `its task "${t.task}" is no task of the configured EXP-Bench datasets: the repository at a step needs the task's repository (or import the run as a session)` };
      return { ...base, repository: true };
    },
    prices() {
      try { return opts.prices?.() ?? {}; } catch { return {}; }
    },
    link(uri, step) {
      return `${vscode.env.uriScheme}://${opts.extensionId}/trajectory?uri=${encodeURIComponent(uri.toString())}&step=${step}`;
    },
  };
}

function view(j: Judgement): TrajJudgement {
  return { id: j.id, at: j.at, by: j.by, kind: j.kind, value: text(j.value), ...(j.reason ? { reason: j.reason } : {}), ...(j.before !== undefined ? { before: text(j.before) } : {}) };
}
