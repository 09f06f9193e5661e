import { readJudgeRecord } from '../judge/session';
import { SessionLayout } from '../layout';
import { policyByName } from '../metrics/policies';
import { outcomeFromRecord, scoreTask } from '../metrics/scores';
import { workingMs } from '../session/clock';
import type { SessionEvent } from '../session/events';
import { readState } from '../session/store';
import { parseLine } from '../steps/events';
import { readLines } from '../util/jsonl';
import { readLatestRecord } from '../verify/record';
import type { UnitOutcome } from './state';
import * as path from 'node:path';

/** The metric policy of a unit's outcome on the board and in the state (docs/runs.md). */
export const OUTCOME_POLICY = 'paper-likely';

/** What a unit's session says so far (read only: nothing of the session is written or opened). */
export interface SessionProgress {
  /** Events read. */
  events: number;
  phase?: string;
  /** Model calls of the built-in agent that got an answer, and their tokens and USD (null: some unpriced). */
  steps: number;
  tokens: number;
  costUsd: number | null;
  workingMs?: number;
  submitted: boolean;
  gaveUp: boolean;
  /** The last `agent stopped: <reason>` note's reason, and its message. */
  agentStop?: { reason: string; message: string };
  /** The last verifier and judge step after the submission (`verify.finished`, `judge.finished`). */
  verify?: { ok: boolean; error?: string; summary?: string };
  judge?: { ok: boolean; error?: string; summary?: string };
}

const STOP_NOTE = /^agent stopped: ([a-z_]+): ([\s\S]*)$/;

/**
 * Follows a unit's session event log from where it last read (byte offset), adding each event
 * into a {@link SessionProgress}; cheap to call every few seconds on a running unit.
 */
export class SessionProgressReader {
  private offset = 0;
  private line = 0;
  private p: SessionProgress = { events: 0, steps: 0, tokens: 0, costUsd: 0, submitted: false, gaveUp: false };

  constructor(readonly sessionDir: string) {}

  /** The progress with the events appended since the last call, and the state's clock and phase. */
  async read(): Promise<SessionProgress> {
    const layout = new SessionLayout(this.sessionDir);
    for await (const l of readLines(layout.events, { fromOffset: this.offset })) {
      if (l.kind === 'torn') break;
      this.offset = l.offset + Buffer.byteLength(l.text, 'utf8') + 1;
      const e = parseLine(l.text, ++this.line, l.offset);
      if (e.kind === 'event') addEvent(this.p, e.event);
    }
    const state = await readState(layout.state).catch(() => undefined);
    if (state) {
      this.p.phase = state.phase;
      this.p.workingMs = Math.round(workingMs(state.clock));
      this.p.submitted = state.submitted !== undefined && state.submitted !== null;
      this.p.gaveUp = state.gaveUp !== undefined && state.gaveUp !== null;
    }
    return { ...this.p };
  }
}

/** Adds one event to the progress (pure). */
export function addEvent(p: SessionProgress, e: SessionEvent): void {
  p.events++;
  switch (e.type) {
    case 'phase.changed': p.phase = e.to; break;
    case 'agent.model_call':
      p.tokens += e.inputTokens + e.outputTokens;
      p.costUsd = p.costUsd === null || e.costUsd === null ? null : p.costUsd + e.costUsd;
      if (!e.error) p.steps++;
      break;
    case 'note.added': {
      const m = STOP_NOTE.exec(e.text);
      if (m) p.agentStop = { reason: m[1], message: m[2] };
      break;
    }
    case 'submitted': p.submitted = true; p.verify = undefined; p.judge = undefined; break;
    case 'gave_up': p.gaveUp = true; break;
    case 'verify.finished': p.verify = { ok: e.ok, ...(e.error ? { error: e.error } : {}), ...(e.summary ? { summary: e.summary } : {}) }; break;
    case 'judge.finished': p.judge = { ok: e.ok, ...(e.error ? { error: e.error } : {}), ...(e.summary ? { summary: e.summary } : {}) }; break;
    default: break;
  }
}

/** The whole progress of a session (its log read from the start). */
export async function readSessionProgress(sessionDir: string): Promise<SessionProgress> {
  return new SessionProgressReader(sessionDir).read();
}

/**
 * A unit's outcome from its session: `submitted`, the agent's stop, E (`E_clean` of the latest
 * verification record), D, I, C, All✓ and All·E✓ of the judge record under {@link OUTCOME_POLICY}
 * (src/core/metrics/scores.ts; `null` where not computable: no judge record, a harness error),
 * tokens, USD and working time. Read only.
 */
export async function unitOutcome(sessionDir: string, progress?: SessionProgress): Promise<UnitOutcome> {
  const layout = new SessionLayout(sessionDir);
  const p = progress ?? await readSessionProgress(sessionDir);
  const verify = await readLatestRecord(layout).then((r) => r.record, () => undefined);
  const judge = await readJudgeRecord(path.join(layout.judge, 'latest.json')).catch(() => undefined);
  const out: UnitOutcome = {
    submitted: p.submitted, ...(p.agentStop ? { stop: p.agentStop.reason } : {}),
    E: verify ? verify.E_clean : null, D: null, I: null, C: null, All: null, AllE: null,
    tokens: p.tokens, costUsd: p.costUsd, ...(p.workingMs !== undefined ? { workingMs: p.workingMs } : {}),
    ...(p.verify?.summary ? { verify: p.verify.summary } : {}), ...(p.judge?.summary ? { judge: p.judge.summary } : {}),
  };
  if (judge) {
    const s = scoreTask(outcomeFromRecord(judge, 'unit', sessionDir), policyByName(OUTCOME_POLICY));
    out.D = s.correct.D; out.I = s.correct.I; out.C = s.correct.C; out.All = s.correct.All;
    out.AllE = out.E === null || s.correct.All === null ? null : s.correct.All && out.E;
  }
  return out;
}
