import { formatWorking } from '../../src/core/session/clock';

/** The clock as the phases view receives it (src/protocol/phases.ts). */
export interface ClockView {
  status: string;
  workingMs: number;
  budgetMs: number | null;
  /** The working time split by actor, ms (src/core/session/clock.ts `workingByActor`). */
  byActor?: { human: number; agent: number };
}

/**
 * The clock bar's text: `Working time m:ss[ / budget]`, the agent's and the person's share when an
 * agent has worked (`agent m:ss, you m:ss`: whole seconds that add up to the total shown), and
 * what the clock is doing. A session that is finished says so ("submitted", "gave up") whatever
 * the clock's status; otherwise the clock status gives "not started" (never started), "paused" or
 * nothing (running). E.g. `Working time 0:12 (agent 0:09, you 0:03; paused)`.
 */
export function clockText(clock: ClockView, finished: 'submitted' | 'gaveUp' | null | undefined): string {
  const time = `${formatWorking(clock.workingMs)}${clock.budgetMs ? ` / ${formatWorking(clock.budgetMs)}` : ''}`;
  const what = finished === 'submitted' ? 'submitted' : finished === 'gaveUp' ? 'gave up'
    : clock.status === 'not-started' ? 'not started' : clock.status === 'running' ? '' : clock.status === 'paused' ? 'paused' : 'stopped';
  const parts = [splitText(clock), what].filter(Boolean).join('; ');
  return `Working time ${time}${parts ? ` (${parts})` : ''}`;
}

/** `agent m:ss, you m:ss` when the agent has worked at all, else empty. */
function splitText(clock: ClockView): string {
  if (!clock.byActor || clock.byActor.agent <= 0) return '';
  const total = Math.max(0, Math.floor(clock.workingMs / 1000));
  const agent = Math.min(total, Math.floor(clock.byActor.agent / 1000));
  return `agent ${formatWorking(agent * 1000)}, you ${formatWorking((total - agent) * 1000)}`;
}
