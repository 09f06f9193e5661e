import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { startProctoredWork, type ProctoredWork } from '../flows/proctoredBaseline';
import type { SubmitFlowResult } from '../flows/submit';
import { log } from '../log';
import { busy, minus, plus, unfit } from '../placement/fit';
import { machineCapacity } from '../placement/local';
import type { Amounts, Capacity } from '../placement/types';
import type { EditorInstall } from '../proctor';
import type { RunSetView } from '../runs/fold';
import { RunSetLayout } from '../runs/layout';
import { specDatasets } from '../runs/plan';
import type { RunSetSpec } from '../runs/spec';
import { connectDocker } from '../sandbox';
import { findTask, loadDatasets } from '../tasks/loader';
import type { LoadResult } from '../tasks/types';
import { errorMessage } from '../util/errors';
import { campaignHours, readSessionBudget } from './budget';
import { CAMPAIGN_COOKIE, type GateAnswer } from './front';
import { SessionProxy } from './proxy';
import { readSessionFacts } from './sessions';
import { personUnits, type PersonUnit } from './views';

const logger = log('campaigns');

/** Default idle time before a session's container is stopped: 30 minutes with no window connected and no request. */
export const DEFAULT_IDLE_MS = 30 * 60_000;
/** A queued person whose page has not asked again for this long (it reloads every 5 s) has gone; the place is given up. */
const QUEUE_STALE_MS = 2 * 60_000;

/** Options of {@link CampaignSessions}. */
export interface CampaignSessionsOptions {
  /** The campaign's folder. */
  dir: string;
  view: RunSetView;
  /** Containers at once; default {@link sessionCapacity} of the machine. */
  capacity?: number;
  /** Idle time before a session stops, ms (default {@link DEFAULT_IDLE_MS}). */
  idleMs?: number;
  docker?: Docker;
  editor?: EditorInstall;
  /** The solver build (default `<package>/dist/solver`). */
  solverExtension?: string;
  /** The pristine clone cache (default the user's). */
  cacheDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Called on the host with a session's full submission result (verifier and judge); the person sees only "submitted". */
  onSubmitted?: (session: string, result: SubmitFlowResult) => void;
  /** Progress of each session's start and stop (the serve command's log). */
  onProgress?: (session: string, message: string) => void;
}

/**
 * How many sessions fit on a machine at once: for each resource a session needs (the unit's
 * CPUs, memory and GPUs, docs/placement.md), the machine's total over that need, the least of
 * them (at least 1 when one session fits at all; 0 when none does: {@link unfit}).
 */
export function sessionCapacity(cap: Capacity, per: Amounts & { timeSeconds?: number }): number {
  if (unfit({ timeSeconds: 0, ...per }, cap)) return 0;
  const n = [per.cpus > 0 ? Math.floor(cap.total.cpus / per.cpus) : Infinity, per.memoryMiB > 0 ? Math.floor(cap.total.memoryMiB / per.memoryMiB) : Infinity,
    per.gpus > 0 ? Math.floor(cap.total.gpus / per.gpus) : Infinity];
  const least = Math.min(...n);
  return Number.isFinite(least) ? Math.max(1, least) : 1;
}

type Slot =
  | { state: 'queued'; unit: PersonUnit; seen: number }
  | { state: 'starting'; unit: PersonUnit }
  | { state: 'ready'; unit: PersonUnit; work: ProctoredWork; proxy: SessionProxy; lastActive: number }
  | { state: 'stopping'; unit: PersonUnit };

/**
 * The sessions of a campaign served from one host (docs/campaigns.md "Serving"): the front door's
 * gate. A person's first open of their own session queues it; while fewer than `capacity`
 * sessions run (and, without an explicit capacity, their resources fit what the machine has left:
 * placement's `busy`), the first in the queue is started: prepared when it never was, then its
 * channel, its proctored work container and its editor (startProctoredWork: the proctored
 * baseline's flow and guards). Until it answers the person sees "your task is being prepared"
 * with their place in the queue; then their requests and WebSocket upgrades go to its editor
 * ({@link SessionProxy}). The queue is first come, first served, except that a person with no
 * session running goes before one who has one. A session with no window connected and no request for `idleMs` is
 * stopped (its container kept, the work in its workspace; opening it again starts it again).
 * A submitted or given-up session is not started again.
 */
export class CampaignSessions {
  private readonly slots = new Map<string, Slot>();
  private readonly queue: string[] = [];
  private readonly layout: RunSetLayout;
  private readonly docker: Docker;
  private readonly idleMs: number;
  private loaded?: Promise<LoadResult>;
  private timer?: NodeJS.Timeout;
  private closed = false;
  /** Why the last start of a session failed (shown once, then the next open tries again). */
  private readonly failures = new Map<string, string>();

  private constructor(private readonly o: CampaignSessionsOptions, readonly capacity: number, private readonly machine: Capacity | undefined) {
    this.layout = new RunSetLayout(o.dir);
    this.docker = o.docker ?? connectDocker();
    this.idleMs = o.idleMs ?? DEFAULT_IDLE_MS;
    this.timer = setInterval(() => { void this.reapIdle(); }, Math.max(250, Math.min(30_000, Math.floor(this.idleMs / 4))));
    this.timer.unref();
  }

  /**
   * @throws ExpBenchError BAD_INPUT naming the capacity when it is not a whole number ≥ 1, or when
   *   no session of the campaign fits on this machine
   */
  static async create(o: CampaignSessionsOptions): Promise<CampaignSessions> {
    const units = personUnits(o.view);
    if (o.capacity !== undefined) {
      if (!Number.isInteger(o.capacity) || o.capacity < 1) throw new ExpBenchError('BAD_INPUT', `--capacity ${o.capacity}`, 'expected a whole number ≥ 1 (containers at once)');
      return new CampaignSessions(o, o.capacity, undefined);
    }
    const machine = await machineCapacity(o.docker ?? connectDocker());
    const largest = units.reduce<Amounts>((m, u) => ({ cpus: Math.max(m.cpus, u.resources.cpus), memoryMiB: Math.max(m.memoryMiB, u.resources.memoryMiB), gpus: Math.max(m.gpus, u.resources.gpus) }), { cpus: 1, memoryMiB: 0, gpus: 0 });
    const n = sessionCapacity(machine, largest);
    if (n === 0) throw new ExpBenchError('BAD_INPUT', o.dir, `no session of this campaign fits on ${machine.where}: ${unfit({ ...largest, timeSeconds: 0 }, machine)}`);
    return new CampaignSessions(o, n, machine);
  }

  /** Sessions running or starting now. */
  running(): string[] {
    return [...this.slots].filter(([, s]) => s.state !== 'queued').map(([k]) => k);
  }

  /** The front door's gate (front.ts `SessionGate`) for `session` of `person` (the front checked it is theirs). */
  gate = async (session: string, person: string): Promise<GateAnswer> => {
    if (this.closed) return { state: 'unavailable', reason: 'The host is shutting down.' };
    const slot = this.slots.get(session);
    if (slot?.state === 'ready') return { state: 'ready', serve: slot.proxy };
    if (slot?.state === 'starting' || slot?.state === 'stopping') return { state: 'preparing' };
    if (slot?.state === 'queued') {
      slot.seen = Date.now();
      return { state: 'preparing', position: this.queue.indexOf(session) + 1 };
    }
    const failed = this.failures.get(session);
    if (failed !== undefined) { this.failures.delete(session); return { state: 'unavailable', reason: `Your task could not be started: ${failed}. Reload to try again, or tell the organiser.` }; }
    const unit = personUnits(this.o.view).find((u) => u.name === session && u.actor.baseliner === person);
    if (!unit) return { state: 'unavailable', reason: 'No such task of yours.' };
    const facts = await readSessionFacts(this.layout.session(unit.dir));
    if (facts.submitted) return { state: 'unavailable', reason: `You submitted this task${facts.end ? ` at ${facts.end}` : ''}; it is closed.` };
    if (facts.gaveUp) return { state: 'unavailable', reason: `You gave this task up${facts.end ? ` at ${facts.end}` : ''}; it is closed.` };
    const hours = campaignHours(this.o.view);
    if (hours !== undefined) {
      const b = await readSessionBudget(this.layout.root, this.o.view, unit.name, Date.now(), { starting: true, served: this.served(person) });
      if (b && b.remainingMs <= 0) return { state: 'unavailable', reason: `Your working hours for this campaign (${hours} h by the host's clock) are used up.` };
    }
    this.slots.set(session, { state: 'queued', unit, seen: Date.now() });
    this.queue.push(session);
    this.pump();
    const now = this.slots.get(session);
    return now?.state === 'queued' ? { state: 'preparing', position: this.queue.indexOf(session) + 1 } : { state: 'preparing' };
  };

  /** Starts queued sessions while capacity (and, when measured, the machine's resources) allow. */
  private pump(): void {
    if (this.closed) return;
    const now = Date.now();
    for (;;) {
      const active = [...this.slots.values()].filter((s) => s.state !== 'queued');
      if (active.length >= this.capacity || !this.queue.length) return;
      // drop what is no longer queued, and places whose page stopped asking
      const gone = this.queue.filter((n) => { const q = this.slots.get(n); return q?.state !== 'queued' || now - q.seen > QUEUE_STALE_MS; });
      for (const n of gone) { if (this.slots.get(n)?.state === 'queued') this.slots.delete(n); this.queue.splice(this.queue.indexOf(n), 1); }
      if (!this.queue.length) return;
      // first the first person in the queue who has no session running (one person opening many tasks does not hold every place)
      const busyPeople = new Set(active.map((s) => s.unit.actor.baseliner));
      const at = Math.max(0, this.queue.findIndex((n) => !busyPeople.has((this.slots.get(n) as { unit: PersonUnit }).unit.actor.baseliner)));
      const next = this.queue[at];
      const slot = this.slots.get(next) as Extract<Slot, { state: 'queued' }>;
      if (this.machine) {
        const used = active.reduce<Amounts>((a, s) => plus(a, s.unit.resources), { cpus: 0, memoryMiB: 0, gpus: 0 });
        const why = busy(slot.unit.resources, minus(this.machine.total, used));
        if (why && active.length) return;
      }
      this.queue.splice(at, 1);
      this.start(slot.unit);
    }
  }

  private start(unit: PersonUnit): void {
    const say = (m: string) => { logger.info(`${unit.name}: ${m}`); this.o.onProgress?.(unit.name, m); };
    this.slots.set(unit.name, { state: 'starting', unit });
    void (async () => {
      const loaded = await (this.loaded ??= loadDatasets(specDatasets(this.o.view.spec as unknown as RunSetSpec, this.o.env)));
      const task = findTask(loaded, unit.task);
      if (!task) throw new ExpBenchError('TASK_NOT_FOUND', unit.task, 'not in the campaign\'s datasets any more');
      const allowAi = (this.o.view.spec as { baseline?: { allowAi?: boolean } }).baseline?.allowAi === true;
      const work = await startProctoredWork({
        task, sessionDir: this.layout.session(unit.dir), source: unit.source, ...(unit.commit ? { commit: unit.commit } : {}), image: unit.image,
        cacheDir: this.o.cacheDir, solverExtension: this.o.solverExtension, editor: this.o.editor, aiAllowed: allowAi, docker: this.docker,
        onProgress: say, onSubmitted: (r) => this.o.onSubmitted?.(unit.name, r),
      });
      const proxy = new SessionProxy(`/s/${unit.name}`, {
        socketPath: work.container.editorSocket, guard: () => work.guard(), paused: () => work.paused(), resume: () => work.resume(), restart: () => work.restart(),
      }, CAMPAIGN_COOKIE, () => { const s = this.slots.get(unit.name); if (s?.state === 'ready') s.lastActive = Date.now(); });
      work.onPause(() => proxy.dropConnections());
      if (this.closed) { await work.dispose(); this.slots.delete(unit.name); return; }
      // the person's hours (perPerson.hours): this session's share set before its window is served
      try {
        await this.applyBudget(unit, work, new Set([...this.served(unit.actor.baseliner), unit.name]));
      } catch (e) {
        await work.dispose();
        throw e;
      }
      this.slots.set(unit.name, { state: 'ready', unit, work, proxy, lastActive: Date.now() });
      await this.applyBudgets(unit.actor.baseliner);
      say(`ready (${this.running().length} of ${this.capacity} running)`);
    })().catch((e: unknown) => {
      logger.warn(`${unit.name}: could not start: ${errorMessage(e)}`);
      this.o.onProgress?.(unit.name, `could not start: ${errorMessage(e)}`);
      this.failures.set(unit.name, errorMessage(e));
      this.slots.delete(unit.name);
      this.pump();
    });
  }

  /** The person's sessions served now or being started (each holds its share of the person's hours). */
  private served(person: string): Set<string> {
    return new Set([...this.slots].filter(([, s]) => s.state !== 'queued' && s.unit.actor.baseliner === person).map(([k]) => k));
  }

  /**
   * Sets the hard budget of one served session (campaigns/budget.ts): its own working time plus an
   * equal share of what is left of the person's hours among their served sessions, so that the
   * person's total by the host's clock never passes `perPerson.hours`. No hours in the spec: nothing.
   * @throws ExpBenchError BAD_INPUT when nothing is left of the hours for this session
   */
  private async applyBudget(unit: PersonUnit, work: ProctoredWork, served: ReadonlySet<string>): Promise<void> {
    const b = await readSessionBudget(this.layout.root, this.o.view, unit.name, Date.now(), { served });
    if (!b) return;
    if (b.budgetMs <= 0) throw new ExpBenchError('BAD_INPUT', unit.name, 'the person\'s working hours are used up');
    await work.setBudget(b.budgetMs);
  }

  /** Shares the person's remaining hours again among their served sessions (after one starts or stops). */
  private async applyBudgets(person: string): Promise<void> {
    if (campaignHours(this.o.view) === undefined) return;
    const served = this.served(person);
    for (const [, s] of this.slots) {
      if (s.state === 'ready' && s.unit.actor.baseliner === person) await this.applyBudget(s.unit, s.work, served);
    }
  }

  /** Stops every ready session idle for `idleMs` (no window connected, no request). */
  private async reapIdle(): Promise<void> {
    const now = Date.now();
    for (const [name, s] of this.slots) {
      if (s.state === 'ready' && s.proxy.connections === 0 && now - s.lastActive >= this.idleMs) await this.stop(name, 'idle');
    }
    this.pump();
  }

  private async stop(name: string, why: string): Promise<void> {
    const s = this.slots.get(name);
    if (s?.state !== 'ready') return;
    this.slots.set(name, { state: 'stopping', unit: s.unit });
    s.proxy.dropConnections();
    await s.work.dispose();
    this.slots.delete(name);
    await this.applyBudgets(s.unit.actor.baseliner).catch((e: unknown) => logger.warn(`budgets of ${s.unit.actor.baseliner}: ${errorMessage(e)}`));
    logger.info(`${name}: stopped (${why}); its container and work are kept`);
    this.o.onProgress?.(name, `stopped (${why}); the container and the work are kept`);
  }

  /** Stops every session (containers stopped and kept, work kept) and waits for starts under way. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (;;) {
      const starting = [...this.slots.values()].some((s) => s.state === 'starting' || s.state === 'stopping');
      for (const [name, s] of this.slots) if (s.state === 'ready') await this.stop(name, 'the host stops');
      for (const [name, s] of this.slots) if (s.state === 'queued') this.slots.delete(name);
      if (!starting && !this.slots.size) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
