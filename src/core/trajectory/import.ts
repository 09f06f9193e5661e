import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { readJsonLines } from '../util/jsonl';
import { errorMessage } from '../util/errors';
import { atifToTrajectory } from './atif';
import type { ImportContext } from './context';
import { detectFormat } from './detect';
import { importEventFolder } from './folder';
import { COMPANION_MAX_BYTES, harnessCompanions, harnessRecords, readHarnessFile, type HarnessFile, type HarnessPart } from './expbench';
import { importInspectEval, importInspectJson, UnreadableError } from './inspect';
import { obj, ptr } from './json';
import { eventListToTrajectory, evalOutputToTrajectory, type Located } from './openhands';
import { importOwnEvents } from './own';
import { miniSweAgentToTrajectory, sweAgentToTrajectory } from './sweagent';
import { redactString } from './redact';
import { mappedShare, type Trajectory, type TrajectoryFormat, type TrajProblem } from './types';

/** What `importFiles` reports per file. */
export interface FileReport {
  file: string;
  /** The detected format, or null when the file is no known format or unreadable. */
  format: TrajectoryFormat | null;
  trajectories: number;
  /** True when the file could not be read at all, or is no known format (exit code 2). */
  unreadable: boolean;
}

export interface ImportResult {
  files: FileReport[];
  /** Problems about files (not one trajectory): unknown format, damaged archive, bad lines. */
  problems: TrajProblem[];
}

/** One trajectory's summary line (the `trajectories` of `expbench traj import --json`). */
export interface TrajectorySummary {
  id: string; format: TrajectoryFormat; file: string; task: string | null;
  steps: number; sourceEvents: number; mappedEvents: number; skippedEvents: number; mappedShare: number;
  timed: number; redactions: number; problems: TrajProblem[];
}

export function summarize(t: Trajectory): TrajectorySummary {
  return { id: t.id, format: t.format, file: t.file, task: t.task ?? null, steps: t.steps.length, sourceEvents: t.sourceEvents,
    mappedEvents: t.mappedEvents, skippedEvents: t.skippedEvents, mappedShare: mappedShare(t), timed: t.timed, redactions: t.redactions, problems: t.problems };
}

/**
 * Imports trajectory files of any known format (detected from content), handing each trajectory
 * to `onTrajectory` as soon as it is complete (a large log is never held whole). EXP-Bench harness
 * files are grouped per task index into one record each, emitted after the other files.
 * `opts.onHead`: the head of a large trajectory read whole, before it ({@link ImportContext.head}). Never
 * throws for bad input: every oddity is a problem, an unreadable or unknown file is marked so.
 */
export async function importFiles(files: string[], onTrajectory: (t: Trajectory) => void | Promise<void>, opts: { onHead?: (t: Trajectory) => void } = {}): Promise<ImportResult> {
  const problems: TrajProblem[] = [];
  const reports: FileReport[] = [];
  const harness: Array<{ f: HarnessFile; report: FileReport }> = [];
  for (const file of files) {
    const report: FileReport = { file, format: null, trajectories: 0, unreadable: false };
    reports.push(report);
    let lastFormat: TrajectoryFormat | undefined;
    const ctx: ImportContext = {
      file,
      emit: async (t) => { report.trajectories++; lastFormat = t.format; await onTrajectory(t); },
      problem: (p) => problems.push({ file, ...p }),
      ...(opts.onHead ? { head: opts.onHead } : {}),
    };
    try {
      // a folder: an OpenHands conversation persisted one event per file
      if ((await fsp.stat(file)).isDirectory()) {
        if (await importEventFolder(ctx)) { report.format = report.trajectories ? (lastFormat ?? null) : null; continue; }
        report.unreadable = true;
        problems.push({ file, pointer: '', severity: 'error', message: 'a folder, but no OpenHands event folder (`events/event-NNNNN-<id>.json` or `events/<n>.json`)' });
        continue;
      }
      const d = await detectFormat(file);
      if (d.kind === 'unknown') { report.unreadable = true; problems.push({ file, pointer: '', severity: 'error', message: `no known trajectory format: ${d.reason}` }); continue; }
      report.format = d.format;
      if (d.kind === 'zip') await importInspectEval(ctx);
      else if (d.kind === 'patch') harness.push({ f: await readHarnessFile(file, 'patch'), report });
      else if (d.kind === 'jsonl') await importJsonl(ctx, d.format, d.shape);
      else if (d.format === 'inspect-json') await importInspectJson(ctx, d.large ? undefined : d.doc);
      else if (d.format === 'exp-bench-harness') harness.push({ f: { file, part: d.shape as HarnessPart, json: obj(d.doc) }, report });
      else {
        const doc = d.doc;
        const o = obj(doc) ?? {};
        const id = path.basename(file).replace(/\.(json|jsonl|traj)$/, '');
        if (d.format === 'atif') await ctx.emit(atifToTrajectory(o, file));
        else if (d.format === 'swe-agent') await ctx.emit(sweAgentToTrajectory(o, file));
        else if (d.format === 'mini-swe-agent') await ctx.emit(miniSweAgentToTrajectory(d.shape === 'messages' ? { messages: doc } : o, file));
        else if (d.shape === 'array') await ctx.emit(eventListToTrajectory((doc as unknown[]).map((value, i) => ({ value, pointer: ptr(i) })), file, d.format as 'openhands-v0' | 'openhands-v1', id));
        else if (d.shape === 'eval-output-doc') await ctx.emit(evalOutputToTrajectory(o, file, 1, 0));
      }
    } catch (e) {
      report.unreadable = report.unreadable || e instanceof UnreadableError || report.trajectories === 0;
      problems.push({ file, pointer: '', severity: 'error', message: `cannot read: ${errorMessage(e)}` });
    }
  }
  if (harness.length) {
    // a harness file is read with its record's other files beside it (not listed as files of their own)
    const { files: companions, tooLarge } = await harnessCompanions(harness.map((h) => h.f.file));
    for (const file of tooLarge) problems.push({ file, pointer: '', severity: 'warning', message: `a file of an EXP-Bench harness record beside the one opened, over ${COMPANION_MAX_BYTES / 1048576} MB: left out of the record` });
    for (const file of companions) {
      const report: FileReport = { file, format: null, trajectories: 0, unreadable: false };
      try {
        const d = await detectFormat(file);
        if (d.kind === 'patch') harness.push({ f: await readHarnessFile(file, 'patch'), report });
        else if (d.kind === 'json' && d.format === 'exp-bench-harness') harness.push({ f: { file, part: d.shape as HarnessPart, json: obj(d.doc) }, report });
        else problems.push({ file, pointer: '', severity: 'warning', message: `named as a file of an EXP-Bench harness record but ${d.kind === 'unknown' ? d.reason : `read as ${d.format}`}: left out of the record` });
      } catch (e) {
        problems.push({ file, pointer: '', severity: 'warning', message: `a file of an EXP-Bench harness record beside the one opened, not read: ${errorMessage(e)}` });
      }
    }
    const besides = new Set(companions);
    const records = harnessRecords(harness.map((h) => h.f), problems);
    for (const r of records) {
      for (const f of r.files ?? [r.file]) { const rep = harness.find((h) => h.f.file === f)?.report; if (rep && f === r.file) rep.trajectories++; }
      const taken = (r.files ?? []).filter((f) => besides.has(f));
      if (taken.length) r.problems.push({ file: r.file, pointer: '', severity: 'info', message: `read with the record's ${taken.length === 1 ? 'file' : 'files'} beside it: ${taken.map((f) => path.basename(f)).join(', ')}` });
      await onTrajectory(r);
    }
  }
  // file-level messages can quote the file (JSON.parse errors do): secrets are redacted there too
  return { files: reports, problems: problems.map((p) => ({ ...p, message: redactString(p.message).text })) };
}

async function importJsonl(ctx: ImportContext, format: TrajectoryFormat, shape: 'events' | 'eval-output'): Promise<void> {
  if (format === 'expbench-events') { await ctx.emit(await importOwnEvents(ctx.file)); return; }
  const events: Located[] = [];
  for await (const l of readJsonLines(ctx.file, { missing: 'throw' })) {
    if (l.kind === 'torn' || l.kind === 'invalid') {
      ctx.problem({ pointer: '', line: l.line, offset: l.offset, severity: 'error', message: l.kind === 'torn' ? `truncated last line (${l.text.length} characters, no newline): not read` : `line is not JSON: ${l.error}` });
      continue;
    }
    if (shape === 'eval-output') {
      const o = obj(l.value);
      if (!o || !Array.isArray(o.history)) { ctx.problem({ pointer: '', line: l.line, offset: l.offset, severity: 'warning', message: 'line is not an eval output record (no `history`)' }); continue; }
      await ctx.emit(evalOutputToTrajectory(o, ctx.file, l.line, l.offset));
    } else events.push({ value: l.value, pointer: '', line: l.line, offset: l.offset });
  }
  if (shape === 'events') {
    const dir = path.basename(path.dirname(ctx.file));
    await ctx.emit(eventListToTrajectory(events, ctx.file, format as 'openhands-v0' | 'openhands-v1', dir && dir !== '.' ? `${dir}/${path.basename(ctx.file)}` : path.basename(ctx.file)));
  }
}
