import type { ChannelBrief, SolverState } from '../core/channel/protocol';
import type { ChannelStatus } from '../core/channel/client';
import type { BriefView, PhasesView } from '../protocol/messages';

/**
 * What the solver window's stepper shows (the researcher window's webview, webview-ui/, section
 * `phases`), made from the host's {@link SolverState} and the channel's status. The runs are the
 * host's (reproduce_exp_bench.sh run through the channel, `running` while one is going on); there is no
 * patch, claims or results here: the proctored window gets none of the host's checks, and the
 * container line says whether the host is reachable and how many changes wait for it.
 */
export function phasesView(s: SolverState, status: ChannelStatus, now: number = Date.now(), since?: number, running = false): PhasesView {
  // A running clock moves on between host answers: the window adds the time since the last one.
  const workingMs = s.clock.workingMs + (s.clock.status === 'running' && since !== undefined ? Math.max(0, now - since) : 0);
  return {
    kind: 'state', phase: s.phase, finished: s.finished,
    clock: { status: s.clock.status, workingMs, budgetMs: s.clock.budgetMs, text: formatWorking(workingMs) },
    design: s.design, conclusion: s.conclusion,
    // the oldest notes the host left out of its answer (the line limit) are named, not shown
    notes: s.omittedNotes ? [{ at: s.notes[0]?.at ?? '', text: `(${s.omittedNotes} earlier note${s.omittedNotes === 1 ? '' : 's'} kept on the host, not shown here)` }, ...s.notes] : s.notes,
    runs: s.runs.map((r) => ({ id: r.id, startedAt: r.startedAt, exitCode: r.exitCode, durationMs: r.durationMs, ...(r.error ? { error: r.error } : {}) })),
    running,
    container: status.connected
      ? { state: 'ready', message: status.queued ? `connected to the host; sending ${status.queued} queued change(s)…` : 'proctored: this editor runs inside the task container; the host records your work' }
      : { state: 'unavailable', message: `the host side is not running (${status.lastError ?? 'not connected'}): ${status.queued} change(s) queued in the channel folder, sent when it is back` },
    patch: null, claims: [], results: [],
  };
}

/** The brief as the webview shows it: question, method and instructions (the host never sends more). */
export function briefView(b: ChannelBrief): BriefView {
  // No paper title or links (the baseliner attests not to read the paper); sessionDir set: the session is open.
  return { taskId: b.taskId, type: b.type, question: b.question, method: b.method, agentInstructions: b.agentInstructions, problems: [], sessionDir: '/workspace' };
}

/** `h:mm:ss` of a duration in ms. */
export function formatWorking(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}
