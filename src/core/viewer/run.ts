import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { JudgeRecord } from '../judge/types';
import { SessionLayout } from '../layout';
import type { ClockState } from '../session/state';
import { readState } from '../session/store';
import { importFiles } from '../trajectory/import';
import { importOwnEvents } from '../trajectory/own';
import type { Trajectory } from '../trajectory/types';
import { errorMessage } from '../util/errors';
import { exists, readJsonIfExists } from '../util/fs';
import { readManifest } from '../workspace/manifest';
import type { RunActor } from './triageTable';

export type { RunActor };

/** The name the built-in agent (src/core/agent) goes by in triage rows. */
export const BUILTIN_AGENT = 'expbench-agent';

/**
 * One run as triage and compare read it: a session folder (its `private/events.jsonl` read as a
 * trajectory with exact phases, its judge record, its clock) or one trajectory of a file.
 */
export interface LoadedRun {
  /** The session folder, or the file (`<file>#<trajectory id>` when the file holds several). */
  run: string;
  source: 'session' | 'file';
  /** The session folder or the trajectory file, as read. */
  path: string;
  trajectory: Trajectory;
  task: string | null;
  actor: RunActor;
  /** `human`, {@link BUILTIN_AGENT}, the agent an imported run names, else the file's format. */
  agent: string;
  /** The model most steps name (ties: the first seen), else the run's metadata; null for a person. */
  model: string | null;
  /** `private/judge/latest.json` when it is a valid judge record. */
  judge: JudgeRecord | null;
  /** The session's clock (state.json), when there is one. */
  clock: ClockState | null;
  /** Working time at submission (state.json `submitted.workingMs`), ms. */
  submittedWorkingMs: number | null;
  /** True when `private/verify/latest.json` exists (a verification record). */
  verified: boolean;
  /** What could not be read (a damaged state or judge file), for a person. */
  problems: string[];
}

/** True when `dir` is a session folder (it has `private/manifest.json` or `private/events.jsonl`). */
export async function isSessionFolder(dir: string): Promise<boolean> {
  const l = new SessionLayout(dir);
  return (await exists(l.manifest)) || (await exists(l.events));
}

/**
 * Reads a session folder as a run: task from the manifest (else the log's `session.opened`),
 * actor `agent` when the log holds agent model calls or tool calls, an outside agent's
 * `agent.attached`, imported steps or an import record (`private/import/record.json`), else
 * `human`. The agent: the imported run's, else the outside clients' names (an MCP `clientInfo.name`,
 * `vscode-extension`) when the built-in agent made no model call, else {@link BUILTIN_AGENT}.
 *
 * @throws ExpBenchError BAD_INPUT naming `dir` when it is no session folder
 */
export async function loadSessionRun(dir: string): Promise<LoadedRun> {
  const abs = path.resolve(dir);
  if (!(await isSessionFolder(abs))) throw new ExpBenchError('BAD_INPUT', dir, 'not a session folder (no private/manifest.json or private/events.jsonl)');
  const layout = new SessionLayout(abs);
  const problems: string[] = [];
  const trajectory = await exists(layout.events)
    ? await importOwnEvents(layout.events)
    : { version: 1, id: path.basename(abs), format: 'expbench-events' as const, file: layout.events, steps: [], sourceEvents: 0, mappedEvents: 0, skippedEvents: 0, timed: 0, redactions: 0, problems: [] };
  const manifest = await readManifest(abs).catch(() => undefined);
  const judge = await readJudge(path.join(layout.judge, 'latest.json'), problems);
  const state = await readState(layout.state).catch((e) => { problems.push(errorMessage(e)); return undefined; });
  const imported = await readJsonIfExists<{ trajectory?: { format?: string; id?: string } }>(path.join(layout.imported, 'record.json')).catch(() => undefined);
  const importedSteps = trajectory.steps.filter((s) => s.source.kind === 'trajectory.step');
  const agentCalls = trajectory.steps.filter((s) => s.source.kind === 'agent.model_call');
  // Outside agents (MCP clients, VS Code chat agents through the LM tools: docs/outside-agents.md) announce themselves with `agent.attached`.
  const outside = [...new Set(trajectory.steps.filter((s) => s.source.kind === 'agent.attached')
    .map((s) => s.extra?.client).filter((c): c is string => typeof c === 'string' && c !== ''))];
  const toolCalls = trajectory.steps.some((s) => s.source.kind === 'agent.tool_call');
  const actor: RunActor = imported || importedSteps.length || agentCalls.length || outside.length || toolCalls ? 'agent' : 'human';
  const importedFormat = imported?.trajectory?.format ?? (importedSteps.length ? 'imported' : undefined);
  const agentName = importedFormat ? agentOfFormat(importedFormat) : !agentCalls.length && outside.length ? outside.join(', ') : BUILTIN_AGENT;
  return {
    run: abs, source: 'session', path: abs, trajectory,
    task: manifest?.taskId ?? trajectory.task ?? judge?.taskId ?? null,
    actor,
    agent: actor === 'human' ? 'human' : agentName,
    model: actor === 'human' ? null : modelOf(trajectory),
    judge,
    clock: state?.clock ?? null,
    submittedWorkingMs: state?.submitted?.workingMs ?? state?.gaveUp?.workingMs ?? null,
    verified: await exists(path.join(layout.verify, 'latest.json')),
    problems,
  };
}

/**
 * Reads a trajectory file (any importer format, docs/steps.md) as runs, one per trajectory; a
 * file that holds this project's own `events.jsonl` inside a session folder is read as that session.
 * Each run's `problems` are the error messages of the file (a damaged zip, a torn line) and of its trajectory.
 *
 * @throws ExpBenchError BAD_INPUT naming `file` when it holds no trajectory (its problems listed)
 */
export async function loadFileRuns(file: string): Promise<LoadedRun[]> {
  const abs = path.resolve(file);
  if (path.basename(abs) === 'events.jsonl' && path.basename(path.dirname(abs)) === 'private') return [await loadSessionRun(path.dirname(path.dirname(abs)))];
  const ts: Trajectory[] = [];
  const r = await importFiles([abs], (t) => { ts.push(t); });
  if (ts.length === 0) throw new ExpBenchError('BAD_INPUT', file, `holds no trajectory: ${r.problems.map((p) => p.message).join('; ') || 'no known format'}`);
  // The file's errors (a damaged zip, a torn line) and the trajectory's own: each run read from a damaged file says so.
  const damage = (t: Trajectory) => [...new Set([...r.problems, ...t.problems].filter((p) => p.severity === 'error').map((p) => p.message))];
  return ts.map((t) => ({
    run: ts.length > 1 ? `${abs}#${t.id}` : abs, source: 'file' as const, path: abs, trajectory: t,
    task: t.task ?? null, actor: 'agent' as const, agent: agentOfTrajectory(t), model: modelOf(t),
    judge: null, clock: null, submittedWorkingMs: null, verified: false, problems: damage(t),
  }));
}

/**
 * Reads a run named as the viewer names it: a session folder, a trajectory file, or
 * `<file>#<trajectory id>` for one trajectory of a file that holds several.
 *
 * @throws ExpBenchError BAD_INPUT naming `run` when it does not exist, holds no trajectory, or has no trajectory of that id
 */
export async function loadRun(run: string): Promise<LoadedRun> {
  const hash = run.lastIndexOf('#');
  const file = hash > 0 && !(await exists(run)) ? run.slice(0, hash) : run;
  const id = file === run ? undefined : run.slice(hash + 1);
  const st = await fsp.stat(file).catch(() => undefined);
  if (!st) throw new ExpBenchError('BAD_INPUT', run, 'no such session folder or trajectory file');
  if (st.isDirectory()) return loadSessionRun(file);
  const runs = await loadFileRuns(file);
  if (id === undefined) return runs[0];
  const found = runs.find((r) => r.trajectory.id === id);
  if (!found) throw new ExpBenchError('BAD_INPUT', run, `the file has no trajectory ${id}; it has ${runs.map((r) => r.trajectory.id).join(', ')}`);
  return found;
}

async function readJudge(file: string, problems: string[]): Promise<JudgeRecord | null> {
  const json = await readJsonIfExists(file).catch((e) => { problems.push(errorMessage(e)); return undefined; });
  if (json === undefined) return null;
  const r = JudgeRecord.safeParse(json);
  if (!r.success) { problems.push(`${file}: not a judge record (${r.error.issues[0]?.message ?? 'invalid'})`); return null; }
  return r.data;
}

/** The model most steps name (ties: the first seen), else the one the run's metadata names ({@link MODEL_PATHS}); null when none says. */
export function modelOf(t: Trajectory): string | null {
  const counts = new Map<string, number>();
  for (const s of t.steps) if (s.model?.model) counts.set(s.model.model, (counts.get(s.model.model) ?? 0) + 1);
  let best: string | null = null;
  for (const [m, n] of counts) if (best === null || n > counts.get(best)!) best = m;
  if (best) return best;
  for (const p of MODEL_PATHS) {
    const v = at(t.metadata, p);
    if (typeof v === 'string' && v) return v;
  }
  return null;
}

/** Where run metadata names the model: Inspect `model`, harness `config.model` / `config.llm_name` (Curie's), OpenHands eval output `metadata.llm.model` / `metadata.llm_config.model`. */
const MODEL_PATHS = [['model'], ['config', 'model'], ['config', 'llm_name'], ['metadata', 'llm', 'model'], ['metadata', 'llm_config', 'model'], ['llm_config', 'model']];

function at(o: unknown, keys: string[]): unknown {
  let v = o;
  for (const k of keys) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** The agent a trajectory names (ATIF `agent.name`, the harness config's `agent_name`), else its format's agent. */
export function agentOfTrajectory(t: Trajectory): string {
  const md = t.metadata ?? {};
  const atif = (md.agent as Record<string, unknown> | undefined)?.name;
  const harness = (md.config as Record<string, unknown> | undefined)?.agent_name;
  const named = typeof atif === 'string' ? atif : typeof harness === 'string' ? harness : undefined;
  return named ?? agentOfFormat(t.format);
}

/** The agent behind a trajectory format (`openhands-v1` → `openhands`, `inspect-eval` → `inspect`). */
export function agentOfFormat(format: string): string {
  if (format.startsWith('openhands')) return 'openhands';
  if (format.startsWith('inspect')) return 'inspect';
  if (format === 'expbench-events') return BUILTIN_AGENT;
  return format;
}
