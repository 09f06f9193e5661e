import { formatWorking } from '../../src/core/session/clock';

/** The clock as the phases view receives it (src/protocol/phases.ts). */
export interface ClockView {
  status: string;
  workingMs: number;
  budgetMs: number | null;
}

/**
 * The clock bar's text: `Working time m:ss[ / budget]` and what the clock is doing. A session that
 * is finished says so ("submitted", "gave up") whatever the clock's status; otherwise the clock
 * status gives "not started" (never started), "paused" or nothing (running).
 */
export function clockText(clock: ClockView, finished: 'submitted' | 'gaveUp' | null | undefined): string {
  const time = `${formatWorking(clock.workingMs)}${clock.budgetMs ? ` / ${formatWorking(clock.budgetMs)}` : ''}`;
  const what = finished === 'submitted' ? 'submitted' : finished === 'gaveUp' ? 'gave up'
    : clock.status === 'not-started' ? 'not started' : clock.status === 'running' ? '' : clock.status === 'paused' ? 'paused' : 'stopped';
  return `Working time ${time}${what ? ` (${what})` : ''}`;
}
