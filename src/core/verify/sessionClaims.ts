import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { checkClaims, OutputSource } from './claims';
import { MAX_CHANGED_FILE_BYTES, MAX_CHANGED_FILES } from './container-io';
import type { ClaimsResult } from './record';
import type { SessionLayout } from '../layout';
import { LIMITS, readUntrustedText, readUntrustedWindow } from '../untrusted';

/** Claims of a conclusion checked against the session's work-container runs. */
export interface SessionClaimsStatus extends ClaimsResult {
  /** The logs searched, relative to the session root (`private/runs/<id>.log`), newest first. */
  logs: string[];
  /** Files of the workspace the latest run wrote (relative to the session root), searched too. */
  files: string[];
}

/** Folders of the workspace never searched for a run's files. */
const SKIP_DIRS = new Set(['.git', '.devcontainer', 'node_modules', '__pycache__', '.ipynb_checkpoints']);

/** Start of a run from its log name `run-YYYYMMDDTHHMMSSZ-xxxx.log` (ms), or undefined. */
function startOf(name: string): number | undefined {
  const m = /^run-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z/.exec(name);
  return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : undefined;
}

/** Text files under `dir` modified within [from, to] ms (bounded like the verifier's changed files). */
async function filesWritten(dir: string, from: number, to: number): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try { entries = await fsp.readdir(d, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      if (out.length >= MAX_CHANGED_FILES) return;
      const p = path.join(d, e.name);
      if (e.isDirectory()) { if (!SKIP_DIRS.has(e.name)) await walk(p); continue; }
      if (!e.isFile()) continue;
      const st = await fsp.stat(p).catch(() => undefined);
      if (st && st.mtimeMs >= from && st.mtimeMs <= to && st.size <= MAX_CHANGED_FILE_BYTES) out.push(p);
    }
  };
  await walk(dir);
  return out.sort();
}

/**
 * Lists the numbers `conclusion` claims and, for each, whether the script runs so far produced it:
 * found, derived or not found, by the verifier's one numbers check (src/core/verify/claims.ts).
 * Searched, in this order (the first locations are cited, so the latest run is cited first): the
 * latest run's log, the workspace files that run wrote (modified between its start, the log's
 * birth time or else its name, and the log's last write; not reproduce_exp_bench.sh; < 1 MiB, text, at most 500, `.git`, `__pycache__`,
 * `node_modules` skipped: the verifier's bounds), then the older logs, newest first. Derived
 * claims combine numbers of one run only (its log and its files). `where[].source` is relative to
 * the session root. No runs → every claim is reported not found.
 */
export async function claimsStatus(layout: SessionLayout, conclusion: string): Promise<SessionClaimsStatus> {
  let names: string[] = [];
  try {
    names = (await fsp.readdir(layout.runs)).filter((n) => n.endsWith('.log')).sort().reverse();
  } catch (e: any) {
    if (e?.code !== 'ENOENT') throw e;
  }
  const rel = (file: string) => path.relative(layout.root, file).split(path.sep).join('/');
  const outputs: OutputSource[] = [];
  const files: string[] = [];
  for (const [i, n] of names.entries()) {
    const file = path.join(layout.runs, n);
    outputs.push({ source: rel(file), text: (await readUntrustedWindow(file, { maxBytes: LIMITS.logBytes }))?.text ?? '', group: n });
    const named = startOf(n);
    if (i !== 0 || named === undefined) continue;
    const st = await fsp.stat(file);
    // the log is created when the run starts: its birth time (ms) when the file system keeps one, else the name's second
    const start = st.birthtimeMs > 0 ? st.birthtimeMs : named;
    for (const f of await filesWritten(layout.workspace, start, st.mtimeMs + 1000)) {
      if (f === layout.script) continue; // the script is not an output
      // a file of the solver's: no link followed out, no FIFO opened, bounded (skipped when it is none of those)
      const text = await readUntrustedText(f, { within: layout.workspace, maxBytes: LIMITS.workspaceFileBytes }).catch(() => '') ?? '';
      if (text.includes('\0')) continue;
      files.push(rel(f));
      outputs.push({ source: rel(f), text, group: n });
    }
  }
  return { ...checkClaims(conclusion, outputs), logs: names.map((n) => rel(path.join(layout.runs, n))), files };
}
