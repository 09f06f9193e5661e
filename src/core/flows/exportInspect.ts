import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { agentBrief, briefMessage, systemPrompt } from '../agent/prompt';
import { toolDefinitions } from '../agent/tools';
import { ExpBenchError } from '../errors';
import { readJudgeRecord } from '../judge/session';
import { SessionLayout } from '../layout';
import { toolVersion } from '../paths';
import { readEvents } from '../session/events';
import { readTaskSnapshot } from '../session/marker';
import { readState } from '../session/store';
import { inspectLogOf, writeInspectLog, type InspectExportCounts, type InspectSessionInput } from '../trajectory/inspectWrite';
import { HarnessAnswersSchema } from '../session/answers';
import { HARNESS_FILES } from '../layout';
import { readRegularFile } from '../util/fs';
import { excerpt } from '../steps/events';
import { latestRecordPath, readRecord, summary as verifySummary } from '../verify';
import { LIMITS, readUntrustedWindow } from '../untrusted';
import { readManifest } from '../workspace/manifest';

/** The export formats (the importer's names for them, src/core/trajectory/types.ts). */
export const INSPECT_EXPORT_FORMATS = ['inspect-eval', 'inspect-json'] as const;
export type InspectExportFormat = (typeof INSPECT_EXPORT_FORMATS)[number];

/** Longest script-run log kept in a `sandbox` event's output, characters (head and tail kept). */
export const MAX_RUN_LOG_CHARS = 16_000;

/** What {@link exportSessionInspect} wrote. */
export interface InspectExportResult {
  file: string;
  format: InspectExportFormat;
  bytes: number;
  task: string;
  solver: 'agent' | 'human';
  counts: InspectExportCounts;
  /** Scorer names in the log (`expbench_judge`, `expbench_verify`). */
  scores: string[];
  /** Lines of the event log that were not valid events (left out). */
  invalidLines: number;
}

/**
 * Exports the session at `sessionDir` (a human's or an agent's) as an Inspect AI log
 * (src/core/trajectory/inspectWrite.ts has the mapping): its events, the clock's working time,
 * the conclusion, the judge's latest record and the verifier's; the agent's system message and
 * tools for an agent session; the public brief as the sample's input (never the ground truth); for
 * a submitted session, what submit froze (the answers and the patch, `metadata.expbench`), which
 * `session import` reads back.
 * Reads only; the session may be open elsewhere.
 * @throws ExpBenchError BAD_INPUT naming `sessionDir` when it is no session, or its event log is missing or empty
 */
export async function exportSessionInspect(sessionDir: string, out: string, format: InspectExportFormat): Promise<InspectExportResult> {
  const layout = new SessionLayout(path.resolve(sessionDir));
  const outStat = await fsp.stat(out).catch(() => undefined);
  if (outStat?.isDirectory()) throw new ExpBenchError('BAD_INPUT', out, `is a folder: give the log file to write, e.g. ${path.join(out, `${path.basename(layout.root)}.${format === 'inspect-eval' ? 'eval' : 'json'}`)}`);
  const manifest = await readManifest(layout.root);
  const state = await readState(layout.state);
  if (!state) throw new ExpBenchError('BAD_INPUT', layout.root, 'the session has no private/state.json: it was never opened');
  const { events, invalid } = await readEvents(layout.events);
  if (events.length === 0) throw new ExpBenchError('BAD_INPUT', layout.events, 'the session\'s event log is missing or empty: nothing to export');
  const task = await readTaskSnapshot(layout.root);
  const brief = agentBrief(task ?? { id: manifest.taskId, question: '', method: '', agentInstructions: '' } as Parameters<typeof agentBrief>[0]);
  const isAgent = events.some((e) => e.type === 'agent.model_call');
  const runLogs: Record<string, string> = {};
  for (const e of events) {
    if (e.type !== 'script.run') continue;
    // the run's output is the solver's: no link followed out of the session, no FIFO opened, at most LIMITS.logBytes read
    const read = await readUntrustedWindow(path.join(layout.root, e.log), { within: layout.root, maxBytes: LIMITS.logBytes }).catch(() => undefined);
    if (read !== undefined) runLogs[e.runId] = excerpt(read.text, MAX_RUN_LOG_CHARS);
  }
  const submission = state.submitted !== undefined ? await frozenSubmission(layout) : undefined;
  const judge = await readJudgeRecord(path.join(layout.judge, 'latest.json')).catch(() => undefined);
  const record = await readRecord(latestRecordPath(layout)).catch(() => undefined);
  const { log, counts, sample } = inspectLogOf({
    sessionId: path.basename(layout.root), taskId: manifest.taskId, events, clock: state.clock, conclusion: state.conclusion,
    submitted: state.submitted !== undefined, gaveUp: state.gaveUp !== undefined,
    brief: briefMessage(brief),
    ...(isAgent ? { system: systemPrompt(), tools: toolDefinitions() } : {}),
    ...(judge ? { judge } : {}),
    ...(record ? { verify: { E_clean: record.E_clean, summary: verifySummary(record) } } : {}),
    runLogs, version: toolVersion(), ...(submission ? { submission } : {}),
  });
  const bytes = await writeInspectLog(log, out, format);
  return {
    file: path.resolve(out), format, bytes, task: manifest.taskId, solver: isAgent ? 'agent' : 'human', counts,
    scores: Object.keys((sample.scores as Record<string, unknown> | null) ?? {}), invalidLines: invalid.length,
  };
}

/**
 * What submit froze: `private/answers.json` (harness form) and `private/harness/patch.diff`, each
 * when present and readable (a regular file, never a link; a damaged answers file is left out).
 */
async function frozenSubmission(layout: SessionLayout): Promise<NonNullable<InspectSessionInput['submission']>> {
  const out: NonNullable<InspectSessionInput['submission']> = {};
  const answers = await readRegularFile(layout.answers, { noFollow: true }).catch(() => undefined);
  if (answers) {
    try {
      const parsed = HarnessAnswersSchema.safeParse(JSON.parse(answers.toString('utf8')));
      if (parsed.success) out.answers = parsed.data;
    } catch { /* not JSON: left out */ }
  }
  const patch = await readRegularFile(path.join(layout.harness, HARNESS_FILES.patch), { noFollow: true }).catch(() => undefined);
  if (patch) out.patch = patch.toString('utf8');
  return out;
}
