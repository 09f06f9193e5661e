import type { RunSetView } from '../runs/fold';
import { RunSetLayout } from '../runs/layout';
import { clockStatus, workingMs } from '../session/clock';
import type { ClockState, SessionState } from '../session/state';
import { readState } from '../session/store';
import { SessionLayout } from '../layout';
import { personUnits } from './views';

/**
 * Working-time budgets of a campaign (docs/campaigns.md "Working-time budgets"): `perPerson.hours`
 * is one pool of working time per person, shared by their sessions and tracked across them, so that
 * the total of a person's working time by the host's clock cannot pass it.
 *
 * The rule: with H the person's hours, w_j each of their sessions' working time so far (host
 * clock: closed segments, a running one up to `now`) and R = max(0, H − Σ w_j) what is left, a
 * session s that runs (or is about to start or resume) gets the hard budget
 *
 *     budget(s) = w_s + R / r,   r = the person's running sessions, s counted among them
 *
 * and a session that does not run gets w_s + R (what it could use if it were the only one to
 * run). The serving gate applies it to a session when it opens, starts or resumes its clock, and
 * to each of the person's running sessions again whenever one of them starts or resumes: at every
 * moment the running sessions' allowances then add up to at most R, so Σ w_j ≤ H. A pause frees
 * nothing early (its share goes back at the next start or resume, when all are recomputed). Budgets
 * are floored to whole ms; one at or below w_s means the hours are used up, and 0 (a session that
 * has not worked yet, nothing left) means it must not start: the gate shows the person that their
 * hours are used up instead of starting the clock.
 */

/** One of a person's sessions as the budget sees it: its clock (from its state.json) and whether it ended. */
export interface PersonSessionClock {
  session: string;
  clock: ClockState;
  /** Submitted or given up: its working time is final. */
  finished: boolean;
}

/** A session's budget and what it was computed from (ms, whole numbers). */
export interface SessionBudget {
  session: string;
  budgetMs: number;
  /** This session's working time so far. */
  workingMs: number;
  /** The person's working time in all their sessions so far. */
  usedMs: number;
  /** What is left of the person's hours (never negative). */
  remainingMs: number;
  /** Running sessions the remainder is split among (this one counted when `starting`). */
  sharedBy: number;
}

/**
 * `starting`: the session is about to start or resume its clock (counted among the running).
 * `served`: sessions whose window is served now, counted among the running whatever their clock
 * says (a served session's clock can resume at any moment, so its share is held for it: the
 * campaign's gate, serve.ts).
 */
export interface BudgetOptions { starting?: boolean; served?: ReadonlySet<string> }

function running(s: PersonSessionClock): boolean {
  return !s.finished && clockStatus({ clock: s.clock }) === 'running';
}

/**
 * The hard budget of one session of a person (the rule above), pure. `starting`: the session is
 * about to start or resume its clock (counted among the running). The sessions' working time is
 * counted as the host's clock does (session/clock.ts `workingMs`, a running segment up to `now`).
 * @throws RangeError when `session` is not among `sessions` or `hours` is not positive
 */
export function sessionBudget(hours: number, sessions: readonly PersonSessionClock[], session: string, now: number, o: BudgetOptions = {}): SessionBudget {
  if (!(hours > 0)) throw new RangeError(`hours must be positive, not ${hours}`);
  const self = sessions.find((s) => s.session === session);
  if (!self) throw new RangeError(`${session} is not among the person's sessions`);
  const worked = new Map(sessions.map((s) => [s.session, workingMs(s.clock, now)]));
  const usedMs = [...worked.values()].reduce((a, b) => a + b, 0);
  const remainingMs = Math.max(0, hours * 3_600_000 - usedMs);
  const runs = (s: PersonSessionClock) => running(s) || (!s.finished && o.served?.has(s.session) === true);
  const selfRuns = runs(self) || o.starting === true;
  const sharedBy = selfRuns ? sessions.filter((s) => s.session !== session && runs(s)).length + 1 : 1;
  const w = worked.get(session)!;
  const budgetMs = Math.floor(w + remainingMs / sharedBy);
  return { session, budgetMs, workingMs: w, usedMs, remainingMs, sharedBy };
}

/**
 * {@link sessionBudget} in seconds (ms precision): the budget of `session` given the person's
 * sessions' clocks. See the rule above.
 */
export function sessionBudgetSeconds(hours: number, sessions: readonly PersonSessionClock[], session: string, now: number, o: BudgetOptions = {}): number {
  return sessionBudget(hours, sessions, session, now, o).budgetMs / 1000;
}

/** `perPerson.hours` of a campaign's spec as recorded in its run set (undefined: no budget). */
export function campaignHours(view: RunSetView): number | undefined {
  const h = (view.spec as { baseline?: { perPerson?: { hours?: unknown } } }).baseline?.perPerson?.hours;
  return typeof h === 'number' && h > 0 ? h : undefined;
}

/**
 * The budget of the session of unit `unitName` in the campaign in `dir`, read from the person's
 * sessions' state files (an unprepared session counts zero), or undefined when the spec sets no
 * `perPerson.hours`. What the gate calls before it opens, starts or resumes a session's clock;
 * then `handle.setBudget(budget.budgetMs, {hard: true})` (a budget of 0: the hours are used up,
 * do not start it).
 * @throws RangeError when the unit is not a person's unit of the campaign
 */
export async function readSessionBudget(dir: string, view: RunSetView, unitName: string, now: number = Date.now(), o: BudgetOptions = {}): Promise<SessionBudget | undefined> {
  const hours = campaignHours(view);
  if (hours === undefined) return undefined;
  const units = personUnits(view);
  const unit = units.find((u) => u.name === unitName);
  if (!unit) throw new RangeError(`${unitName} is not a person's unit of the campaign`);
  const layout = new RunSetLayout(dir);
  const sessions: PersonSessionClock[] = [];
  for (const u of units) {
    if (u.actor.baseliner !== unit.actor.baseliner) continue;
    const state: SessionState | undefined = await readState(new SessionLayout(layout.session(u.dir)).state).catch(() => undefined);
    sessions.push({ session: u.name, clock: state?.clock ?? { budgetMs: null, segments: [], warned: {} }, finished: Boolean(state?.submitted || state?.gaveUp) });
  }
  return sessionBudget(hours, sessions, unitName, now, o);
}
