import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { SessionLayout } from '../layout';
import type { Task } from '../tasks/types';
import { readJsonIfExists } from '../util/fs';
import type { VerificationRecord } from '../verify';

/** Why an imported run's execution check (E) came out as it did, said plainly. */
export interface ImportExecution {
  /** `E_clean` of the latest verification record; null when the verifier did not run. */
  E: boolean | null;
  /** The reasons found, each naming where it was read (verification record, task text, workspace). */
  reasons: string[];
  /** What the task's text says the experiment needs (a heuristic; `checked` says exactly what it read). */
  needs: { gpu: string[]; files: Array<{ name: string; inWorkspace: boolean }>; checked: string };
}

const GPU = /\b(GPUs?|CUDA|A100|A6000|H100|V100|T4|RTX ?\d{4})\b/g;
const DATA_FILE = /(?:^|[\s`'"(=/])([\w.-]+\.(?:ckpt|pt|pth|safetensors|npy|npz|h5|hdf5|pkl|pdb|xtc|dcd|parquet|tar|zip))\b/g;

/**
 * The execution side of an imported run, from the session's latest verification record
 * (`private/verify/latest.json`: exit code, lint of reproduce_exp_bench.sh, GPUs passed, the last
 * line of stderr) and from the task's own text. Heuristic, and it says what it checked: GPU words
 * (`GPU`, `CUDA`, `A100`, `A6000`, `H100`, `V100`, `T4`, `RTX nnnn`) and names of data or weight
 * files (`.ckpt`, `.pt`, `.pth`, `.safetensors`, `.npy`, `.npz`, `.h5`, `.pkl`, `.pdb`, `.xtc`,
 * `.dcd`, `.parquet`, `.tar`, `.zip`) in the task's method, usage instructions and agent
 * instructions; each file is looked up by name in the workspace (root and first level).
 */
export async function importExecution(layout: SessionLayout, task: Pick<Task, 'method' | 'usageInstructions' | 'agentInstructions'>): Promise<ImportExecution> {
  const text = [task.method, task.usageInstructions, task.agentInstructions].join('\n');
  const gpu = [...new Set([...text.matchAll(GPU)].map((m) => m[1]))];
  const names = [...new Set([...text.matchAll(DATA_FILE)].map((m) => m[1]))];
  const here = await workspaceNames(layout.workspace);
  const files = names.map((name) => ({ name, inWorkspace: here.has(name) }));
  const needs = { gpu, files, checked: 'GPU words and data/weight file names in the task\'s method, usage instructions and agent instructions; file names looked up in the workspace root and its first-level folders' };
  const record = await readJsonIfExists<VerificationRecord>(path.join(layout.verify, 'latest.json')).catch(() => undefined);
  const reasons: string[] = [];
  if (!record) reasons.push('the verifier did not run (no private/verify/latest.json)');
  else {
    for (const l of record.lint ?? []) reasons.push(`verification record: ${l.message} (lint ${l.rule})`);
    if (record.error) reasons.push(`verification record: ${record.error.message}`);
    else if (record.timedOut) reasons.push(`verification record: timed out after ${record.limits.timeoutMs / 1000} s`);
    else if (record.exitCode !== 0) reasons.push(`verification record: bash reproduce_exp_bench.sh exited ${record.exitCode}${await lastStderrLine(layout, record)}`);
    if (gpu.length && !record.gpusPassed) reasons.push(`the task's text names GPU hardware (${gpu.join(', ')}); the verification ran with no GPU (gpusPassed false)`);
  }
  const missing = files.filter((f) => !f.inWorkspace).map((f) => f.name);
  if (missing.length) reasons.push(`the task's text names data or weight files that are not in the workspace: ${missing.join(', ')}`);
  return { E: record ? record.E_clean ?? record.E_exit : null, reasons, needs };
}

async function lastStderrLine(layout: SessionLayout, r: VerificationRecord): Promise<string> {
  const text = await fsp.readFile(path.join(layout.root, r.logs.stderr), 'utf8').catch(() => '');
  const last = text.trim().split('\n').at(-1)?.replace(/^\S+Z /, '').trim();
  return last ? `: "${last.slice(0, 200)}"` : '';
}

async function workspaceNames(root: string): Promise<Set<string>> {
  const out = new Set<string>();
  const top = await fsp.readdir(root, { withFileTypes: true }).catch(() => []);
  for (const e of top) {
    out.add(e.name);
    if (e.isDirectory() && e.name !== '.git') {
      for (const n of await fsp.readdir(path.join(root, e.name)).catch(() => [] as string[])) out.add(n);
    }
  }
  return out;
}
