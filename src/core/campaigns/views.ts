import type { RunSetView, UnitView } from '../runs/fold';
import { RunSetLayout } from '../runs/layout';
import type { UnitOutcome } from '../runs/state';
import { unitOutcome } from '../runs/session';
import { readSessionFacts, type SessionFacts } from './sessions';
import type { BaselinerSpec } from './spec';

/** A unit of a campaign: a human unit of the run set, with its person. */
export type PersonUnit = UnitView & { actor: { kind: 'human'; name: string; baseliner: string } };

/** The human units of a run set (a campaign's sessions), in the state's order. */
export function personUnits(view: RunSetView): PersonUnit[] {
  return view.units.filter((u): u is PersonUnit => u.actor.kind === 'human');
}

/** The baseliners the campaign's spec lists (as recorded in `runset.created`). */
export function campaignPeople(view: RunSetView): BaselinerSpec[] {
  const b = (view.spec as { baseline?: { baseliners?: BaselinerSpec[] } }).baseline;
  return Array.isArray(b?.baseliners) ? b.baseliners : [];
}

/** What a person's session is, in one word, for the person and the organiser. */
export type SessionStatus = 'not started' | 'working' | 'paused' | 'submitted' | 'gave up';

function statusOf(f: SessionFacts): SessionStatus {
  if (f.submitted) return 'submitted';
  if (f.gaveUp) return 'gave up';
  if (f.clock === 'paused') return 'paused';
  if (f.clock === 'running') return 'working';
  return 'not started';
}

/**
 * One row of a person's landing page: only what the person may see of their own session (the
 * task's id and session name, status, phase, their own working time). Never another person's
 * sessions, the verifier's or judge's results, scores or anything of the ground truth
 * (docs/proctored.md: after submit the baseliner sees only "submitted").
 */
export interface PersonTaskRow { session: string; task: string; status: SessionStatus; phase?: string; workingMs: number }

/** The person's own rows of the campaign in `dir` (every other person's units left out), read only. */
export async function personTasks(dir: string, view: RunSetView, person: string, now: number = Date.now()): Promise<PersonTaskRow[]> {
  const layout = new RunSetLayout(dir);
  const out: PersonTaskRow[] = [];
  for (const u of personUnits(view)) {
    if (u.actor.baseliner !== person) continue;
    const f = await readSessionFacts(layout.session(u.dir), now);
    out.push({ session: u.name, task: u.task, status: statusOf(f), ...(f.phase ? { phase: f.phase } : {}), workingMs: f.workingMs });
  }
  return out;
}

/** The organiser's board: one row per assignment (docs/campaigns.md "The board"). */
export interface CampaignBoardRow {
  person: string;
  name?: string;
  task: string;
  session: string;
  status: SessionStatus;
  opened: boolean;
  phase?: string;
  workingMs: number;
  pauses: number;
  paused: boolean;
  submitted: boolean;
  gaveUp: boolean;
  attestedAs?: string;
  aiOff?: boolean;
  /** Once submitted: the verifier's and judge's result (E, D, I, C, All✓, All·E✓ as the run set's outcome). */
  outcome?: UnitOutcome;
}

/** The board's rows of the campaign in `dir`, read only. */
export async function campaignBoard(dir: string, view: RunSetView, now: number = Date.now()): Promise<CampaignBoardRow[]> {
  const layout = new RunSetLayout(dir);
  const names = new Map(campaignPeople(view).map((p) => [p.id, p.name]));
  const out: CampaignBoardRow[] = [];
  for (const u of personUnits(view)) {
    const sdir = layout.session(u.dir);
    const f = await readSessionFacts(sdir, now);
    const name = names.get(u.actor.baseliner);
    out.push({
      person: u.actor.baseliner, ...(name ? { name } : {}), task: u.task, session: u.name, status: statusOf(f), opened: f.opened,
      ...(f.phase ? { phase: f.phase } : {}), workingMs: f.workingMs, pauses: f.pauses, paused: f.clock === 'paused',
      submitted: f.submitted, gaveUp: f.gaveUp, ...(f.attestedAs ? { attestedAs: f.attestedAs } : {}), ...(f.aiOff !== undefined ? { aiOff: f.aiOff } : {}),
      ...(f.submitted ? { outcome: await unitOutcome(sdir) } : {}),
    });
  }
  return out;
}

/** One row of the time sheet: one assignment, opened or not; times by the host's clock. */
export interface TimesheetRow { person: string; task: string; session: string; start: string; end: string; workingMs: number; pauses: number; submitted: boolean; gaveUp: boolean }

/** The time sheet of the campaign in `dir`: one row per assignment, in the state's order. */
export async function campaignTimesheet(dir: string, view: RunSetView, now: number = Date.now()): Promise<TimesheetRow[]> {
  const layout = new RunSetLayout(dir);
  const out: TimesheetRow[] = [];
  for (const u of personUnits(view)) {
    const f = await readSessionFacts(layout.session(u.dir), now);
    out.push({ person: u.actor.baseliner, task: u.task, session: u.name, start: f.start ?? '', end: f.end ?? '', workingMs: f.workingMs, pauses: f.pauses, submitted: f.submitted, gaveUp: f.gaveUp });
  }
  return out;
}

/** CSV columns of the time sheet (RFC 4180). */
export const TIMESHEET_COLUMNS = ['person', 'task', 'session', 'start', 'end', 'working_seconds', 'working_hms', 'pauses', 'submitted', 'gave_up'] as const;

/**
 * The time sheet as CSV (RFC 4180: CRLF line ends, a field with a comma, quote or line break
 * quoted, quotes doubled). A field that a spreadsheet would take for a formula (`=`, `+`, `-`,
 * `@`, tab, CR at its start) is prefixed with `'` (OWASP's CSV-injection rule): person ids cannot
 * start so, but this keeps the rule whole.
 */
export function timesheetCsv(rows: readonly TimesheetRow[]): string {
  const field = (v: string) => {
    const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const hms = (ms: number) => {
    const t = Math.floor(ms / 1000);
    return `${Math.floor(t / 3600)}:${String(Math.floor(t / 60) % 60).padStart(2, '0')}:${String(t % 60).padStart(2, '0')}`;
  };
  const lines = [TIMESHEET_COLUMNS.join(',')];
  for (const r of rows) {
    lines.push([r.person, r.task, r.session, r.start, r.end, (r.workingMs / 1000).toFixed(3), hms(r.workingMs), String(r.pauses), String(r.submitted), String(r.gaveUp)].map(field).join(','));
  }
  return lines.join('\r\n') + '\r\n';
}
