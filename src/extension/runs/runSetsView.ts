import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { log } from '../../core/log';
import { foldRunSet, type RunSetView, type UnitView } from '../../core/runs/fold';
import { RunSetLayout } from '../../core/runs/layout';
import { readOrchestrator } from '../../core/runs/lock';
import { readRunSet } from '../../core/runs/state';
import { errorMessage } from '../../core/util/errors';
import { filesFingerprint } from '../follow/fingerprint';
import { Recheck } from '../follow/recheck';
import { onDidChange, setting } from '../settings';
import type { CampaignRow, RunsBoardMessage } from '../../protocol/runs';
import { formatWorking } from '../../core/session/clock';
import { campaignBoardPart, isCampaignView } from './campaign';

const logger = log('runs');
const KNOWN_KEY = 'expbench.runs.known';

/** A row of the Run Sets view: a run set, one of its units, or for a campaign a person and their sessions. */
export type RunSetNode =
  | { kind: 'runSet'; dir: string; view?: RunSetView; alive?: boolean; problem?: string; campaign?: { people: number; sessions: number; submitted: number } }
  | { kind: 'unit'; dir: string; unit: UnitView }
  | { kind: 'person'; dir: string; person: CampaignPerson; rows: CampaignRow[]; hours: number | null; units: UnitView[] }
  | { kind: 'session'; dir: string; row: CampaignRow; unit?: UnitView };
type CampaignPerson = NonNullable<RunsBoardMessage['campaign']>['people'][number];

/** The run sets this window knows: remembered ones (opened or started here) and those under `expbench.runs.folders`. */
export class RunSetIndex implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly subs: vscode.Disposable[] = [this.changed];

  constructor(private readonly state: vscode.Memento) {
    this.subs.push(onDidChange('runs', () => this.changed.fire()));
  }

  /** Remembers a run set's folder (listed from now on, across windows of this user). */
  async remember(dir: string): Promise<void> {
    const known = this.known();
    const abs = path.resolve(dir);
    if (!known.includes(abs)) await this.state.update(KNOWN_KEY, [...known, abs]);
    this.changed.fire();
  }

  /** Forgets a remembered run set (its folder is left as it is). */
  async forget(dir: string): Promise<void> {
    await this.state.update(KNOWN_KEY, this.known().filter((d) => d !== path.resolve(dir)));
    this.changed.fire();
  }

  refresh(): void { this.changed.fire(); }

  /** The folders of every known run set, each once, in the order remembered then configured. */
  async dirs(): Promise<string[]> {
    const out = new Set<string>(this.known().filter((d) => fs.existsSync(new RunSetLayout(d).state)));
    for (const f of setting('runs.folders')) {
      const abs = path.resolve(f);
      if (fs.existsSync(new RunSetLayout(abs).state)) { out.add(abs); continue; }
      for (const e of await fsp.readdir(abs, { withFileTypes: true }).catch(() => [])) {
        const d = path.join(abs, e.name);
        if (e.isDirectory() && fs.existsSync(new RunSetLayout(d).state)) out.add(d);
      }
    }
    return [...out];
  }

  private known(): string[] {
    const v = this.state.get<unknown>(KNOWN_KEY);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  }

  dispose(): void { for (const s of this.subs) s.dispose(); }
}

const ICON: Record<UnitView['status'], [string, string | undefined]> = {
  pending: ['circle-outline', undefined], running: ['sync~spin', 'charts.blue'], done: ['pass', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'], cancelled: ['circle-slash', 'disabledForeground'],
};

/**
 * The Run Sets view (`expbench.runSets`): each known run set with its counts (running or not),
 * its units under it with their status, try and detail. A run set opens its board; a unit its
 * session in the trajectory viewer. Each run set's folder is watched (`fs.watch`), and behind the
 * watcher, once the view has listed, its state and orchestrator files are stat'ed every RECHECK_MS
 * (src/extension/follow/recheck.ts): a watcher can miss events, the view follows its state anyway.
 */
export class RunSetsTreeProvider implements vscode.TreeDataProvider<RunSetNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<RunSetNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly watchers = new Map<string, fs.FSWatcher>();
  private pending: NodeJS.Timeout | undefined;
  private readonly sub: vscode.Disposable;
  private readonly recheck: Recheck;
  private listed: string[] | undefined;

  /** @param follow.recheckMs interval of the re-check, ms; follow.watch false: no `fs.watch` (tests) */
  constructor(private readonly index: RunSetIndex, private readonly follow: { recheckMs?: number; watch?: boolean } = {}) {
    this.sub = index.onDidChange(() => this.changed.fire(undefined));
    this.recheck = new Recheck({
      everyMs: follow.recheckMs,
      active: () => this.listed !== undefined && this.pending === undefined,
      fingerprint: async () => {
        const dirs = await this.index.dirs();
        return `${dirs.join('\n')}\n${await filesFingerprint(dirs.flatMap((d) => { const l = new RunSetLayout(d); return [l.state, l.orchestrator, path.join(l.root, 'campaign.jsonl')]; }))}`;
      },
      changed: () => this.soon(),
    });
  }

  async getChildren(node?: RunSetNode): Promise<RunSetNode[]> {
    if (!node) {
      await this.recheck.reset();
      const dirs = await this.index.dirs();
      this.listed = dirs;
      this.watch(dirs);
      return Promise.all(dirs.map((d) => this.runSet(d)));
    }
    if (node.kind === 'runSet' && node.view && isCampaignView(node.view)) {
      const view = node.view;
      const part = await campaignBoardPart(node.dir, view);
      return part.people.map((person) => ({
        kind: 'person' as const, dir: node.dir, person, hours: part.hours,
        rows: part.rows.filter((r) => r.person === person.person),
        units: view.units.filter((u) => u.actor.kind === 'human' && u.actor.baseliner === person.person),
      }));
    }
    if (node.kind === 'runSet') return (node.view?.units ?? []).map((unit) => ({ kind: 'unit' as const, dir: node.dir, unit }));
    if (node.kind === 'person') return node.rows.map((row) => ({ kind: 'session' as const, dir: node.dir, row, unit: node.units.find((u) => u.name === row.session) }));
    return [];
  }

  getTreeItem(node: RunSetNode): vscode.TreeItem {
    if (node.kind === 'runSet') {
      const item = new vscode.TreeItem(node.view?.name ?? node.dir, node.view ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
      const c = node.view?.counts;
      const k = node.campaign;
      item.description = node.problem ?? (k ? `campaign: ${k.people} people, ${k.submitted}/${k.sessions} submitted`
        : c ? `${c.done}/${node.view!.units.length} done${c.running ? `, ${c.running} running` : ''}${c.failed ? `, ${c.failed} failed` : ''}${node.alive ? ' · running' : ''}` : '');
      item.tooltip = `${node.dir}${node.view ? `\n${node.view.id}` : ''}`;
      item.iconPath = new vscode.ThemeIcon(node.alive ? 'run-all' : k ? 'organization' : 'layers');
      item.contextValue = k ? 'expbench.campaign' : node.alive ? 'expbench.runSet.running' : 'expbench.runSet';
      item.id = `runSet:${node.dir}`;
      item.command = { command: 'expbench.runs.showBoard', title: 'Show Run Set Board', arguments: [{ dir: node.dir }] };
      return item;
    }
    if (node.kind === 'person') return personItem(node);
    if (node.kind === 'session') return sessionItem(node);
    const u = node.unit;
    const item = new vscode.TreeItem(u.task, vscode.TreeItemCollapsibleState.None);
    item.description = `${u.actor.name} a${u.attempt} · ${u.status}${u.try > 1 ? ` (try ${u.try})` : ''}${u.detail ? ` · ${u.detail}` : ''}`;
    const [icon, color] = ICON[u.status];
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    item.tooltip = `${u.name}\nkey ${u.unit}\n${path.join(node.dir, u.dir)}`;
    item.id = `unit:${node.dir}:${u.unit}`;
    item.contextValue = 'expbench.runSetUnit';
    item.command = { command: 'expbench.runs.openUnit', title: 'Open Unit Session', arguments: [{ dir: node.dir, unit: u.unit }] };
    return item;
  }

  private async runSet(dir: string): Promise<RunSetNode> {
    try {
      const layout = new RunSetLayout(dir);
      const read = await readRunSet(layout.state);
      const view = read ? foldRunSet(read.records) : undefined;
      const o = await readOrchestrator(layout.orchestrator);
      const part = view && isCampaignView(view) ? await campaignBoardPart(dir, view) : undefined;
      const campaign = part ? { people: part.people.length, sessions: part.rows.length, submitted: part.rows.filter((r) => r.submitted).length } : undefined;
      return { kind: 'runSet', dir, view, alive: o?.alive === true, ...(campaign ? { campaign } : {}), ...(view ? {} : { problem: 'no run set here' }) };
    } catch (e) {
      return { kind: 'runSet', dir, problem: errorMessage(e) };
    }
  }

  /** Watches each run set's folder; a change refreshes the view (at most every 500 ms). */
  private watch(dirs: string[]): void {
    for (const [d, w] of this.watchers) if (!dirs.includes(d)) { w.close(); this.watchers.delete(d); }
    for (const d of dirs) {
      if (this.watchers.has(d) || this.follow.watch === false) continue;
      try {
        const w = fs.watch(d, (_e, name) => { if (name === 'runset.jsonl' || name === 'orchestrator.json' || name === 'campaign.jsonl') this.soon(); });
        w.on('error', () => undefined);
        this.watchers.set(d, w);
      } catch (e) {
        logger.debug(`cannot watch ${d}: ${errorMessage(e)}`);
      }
    }
  }

  private soon(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => { this.pending = undefined; this.changed.fire(undefined); }, 500);
  }

  dispose(): void {
    this.recheck.dispose();
    for (const w of this.watchers.values()) w.close();
    if (this.pending) clearTimeout(this.pending);
    this.sub.dispose();
    this.changed.dispose();
  }
}

const SESSION_ICON: Record<CampaignRow['status'], [string, string | undefined]> = {
  'not started': ['circle-outline', undefined], working: ['sync~spin', 'charts.blue'], paused: ['debug-pause', 'charts.yellow'],
  submitted: ['pass', 'testing.iconPassed'], 'gave up': ['circle-slash', 'disabledForeground'],
};

/** A campaign's person: their sessions' state in one line, their link's state; the menu copies, re-issues or revokes the link. */
function personItem(node: Extract<RunSetNode, { kind: 'person' }>): vscode.TreeItem {
  const p = node.person;
  const item = new vscode.TreeItem(p.name ? `${p.person} (${p.name})` : p.person, vscode.TreeItemCollapsibleState.Collapsed);
  const n = node.rows.length;
  const sub = node.rows.filter((r) => r.submitted).length;
  const working = node.rows.some((r) => r.status === 'working');
  item.description = `${sub}/${n} submitted · ${formatWorking(p.workingMs)}${node.hours !== null ? ` of ${node.hours} h` : ''}${working ? ' · working' : ''}${p.revoked ? ' · link revoked' : ''}`;
  item.tooltip = `${p.person}: ${n} task(s), ${sub} submitted\nworking time ${formatWorking(p.workingMs)} (host clock)${node.hours !== null ? ` of ${node.hours} h` : ''}\nlink ${p.revoked ? 'revoked' : `generation ${p.generation}`}`;
  item.iconPath = new vscode.ThemeIcon(p.revoked ? 'person' : 'account');
  item.contextValue = p.revoked ? 'expbench.campaignPerson.revoked' : 'expbench.campaignPerson';
  item.id = `person:${node.dir}:${p.person}`;
  return item;
}

/** One of a person's sessions: status, phase, working time; it opens in the trajectory viewer. */
function sessionItem(node: Extract<RunSetNode, { kind: 'session' }>): vscode.TreeItem {
  const r = node.row;
  const item = new vscode.TreeItem(r.task, vscode.TreeItemCollapsibleState.None);
  item.description = `${r.status}${r.phase && !r.submitted ? ` · ${r.phase}` : ''} · ${formatWorking(r.workingMs)}${r.pauses ? ` · ${r.pauses} pause(s)` : ''}`;
  const [icon, color] = SESSION_ICON[r.status];
  item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
  item.tooltip = `${r.session}\n${path.join(node.dir, 'units', r.session)}`;
  item.id = `session:${node.dir}:${r.session}`;
  item.contextValue = 'expbench.campaignSession';
  if (node.unit) item.command = { command: 'expbench.runs.openUnit', title: 'Open Unit Session', arguments: [{ dir: node.dir, unit: node.unit.unit }] };
  return item;
}
