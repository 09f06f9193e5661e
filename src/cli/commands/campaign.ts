import { Command } from 'commander';
import * as path from 'node:path';
import {
  CampaignSessions, DEFAULT_CAMPAIGN_PORT, DEFAULT_IDLE_MS, personUnits, startCampaignFront,
  campaignBoard, campaignKey, campaignLinks, campaignTimesheet, createCampaign, planCampaign, readCampaignSpec, reissueLink, revokeLink,
  timesheetCsv, type CampaignBoardRow,
} from '../../core/campaigns';
import { ExpBenchError } from '../../core/errors';
import { foldRunSet, type RunSetView } from '../../core/runs/fold';
import { RunSetLayout } from '../../core/runs/layout';
import { readRunSet } from '../../core/runs/state';
import { formatWorking } from '../../core/session/clock';
import { printable } from '../../core/untrusted';
import { errorMessage } from '../../core/util/errors';
import { printJson } from '../output';
import { serveUntilStopped } from '../signals';

/**
 * `expbench campaign create SPEC --out DIR` (docs/campaigns.md): plans a baseline campaign and
 * writes its assignment into a run set before anything is served.
 */
export function register(program: Command): void {
  const campaign = program.command('campaign').description('baseline campaigns: people × tasks as a run set of proctored sessions (docs/campaigns.md)');
  campaign.command('create').argument('<spec>', 'campaign spec (JSON with comments: a run-set spec with "baseline")')
    .requiredOption('--out <dir>', 'the campaign\'s folder (a run set\'s folder)')
    .option('--json', 'print the assignment as JSON')
    .description('plan the assignment and write it into the run set (nothing is served); the same spec again changes nothing, a changed assignment is refused')
    .action(async (file: string, opts: { out: string; json?: boolean }) => {
      const { spec, text, file: abs } = await readCampaignSpec(file);
      const plan = await planCampaign(spec);
      const r = await createCampaign(opts.out, spec, text, abs, plan);
      if (opts.json) { printJson({ dir: new RunSetLayout(opts.out).root, id: r.view.id, created: r.created, assignment: plan.assignment }); return; }
      console.log(`${r.created ? 'created' : 'unchanged'}: campaign ${spec.name} (${r.view.id}) in ${new RunSetLayout(opts.out).root}`);
      for (const p of spec.baseline.baseliners) console.log(`  ${p.id}: ${plan.assignment.filter((a) => a.person === p.id).map((a) => a.task).join(', ')}`);
      console.log('links: EXPBENCH_CAMPAIGN_KEY=… expbench runs links DIR');
    });
  campaign.command('serve').argument('<dir>', 'the campaign\'s folder (made by campaign create)')
    .option('--bind <host>', 'address to listen on (over 0.0.0.0 the links travel in clear HTTP: put TLS in front)', '127.0.0.1')
    .option('--port <n>', 'port to listen on', String(DEFAULT_CAMPAIGN_PORT))
    .option('--capacity <n>', 'work containers at once (default: from the machine\'s CPUs and memory over each session\'s needs)')
    .option('--idle-minutes <m>', 'stop a session\'s container after this long with no window connected (work kept; opening it again restarts it)', String(DEFAULT_IDLE_MS / 60_000))
    .option('--cache <dir>', 'the pristine clone cache (default the user\'s)')
    .description('serve every person\'s proctored sessions from this host behind one front door (links: runs links); reads EXPBENCH_CAMPAIGN_KEY from the environment')
    .action(async (dir: string, opts: { bind: string; port: string; capacity?: string; idleMinutes: string; cache?: string }) => {
      const key = campaignKey();
      const view = await campaignView(dir);
      const port = wholeNumber(opts.port, '--port', 0);
      const idle = Number(opts.idleMinutes);
      if (!Number.isFinite(idle) || idle <= 0) throw new ExpBenchError('BAD_INPUT', `--idle-minutes ${opts.idleMinutes}`, 'expected a number of minutes > 0');
      // Ctrl-C, SIGTERM or a closed terminal (SIGHUP) stop it cleanly from here on: node's default
      // for SIGHUP ended the process at once and left every person's proctored container running.
      const stop = serveUntilStopped('stopping the campaign: closing the front door and stopping the containers (kept, with the work)…',
        'still stopping the work containers (work is kept)…');
      try {
        await serveCampaign(dir, opts, key, view, port, idle, stop.stopped);
      } finally {
        stop.dispose();
      }
    });
}

/** Serves the campaign until `stopped` resolves, then closes the front door and stops the sessions' containers (kept). */
async function serveCampaign(dir: string, opts: { bind: string; capacity?: string; cache?: string }, key: string, view: RunSetView, port: number, idle: number,
  stopped: Promise<unknown>): Promise<void> {
  const sessions = await CampaignSessions.create({
    dir, view, ...(opts.capacity !== undefined ? { capacity: wholeNumber(opts.capacity, '--capacity', 1) } : {}), idleMs: Math.round(idle * 60_000),
    ...(opts.cache ? { cacheDir: path.resolve(opts.cache) } : {}),
    onProgress: (s, m) => process.stderr.write(`${s}: ${m}\n`),
    onSubmitted: (s, r) => process.stderr.write(`${s}: submitted (host side): verify ${r.verify ? (r.verify.ok ? 'ok' : 'failed') : 'not run'}; judge ${r.judge ? (r.judge.ok ? 'ok' : 'failed') : 'not run'}\n`),
  });
  let front: Awaited<ReturnType<typeof startCampaignFront>>;
  try {
    front = await startCampaignFront({ dir, key, host: opts.bind, port, gate: sessions.gate });
  } catch (e) {
    await sessions.close();
    throw new ExpBenchError('BAD_INPUT', `${opts.bind}:${port}`, `cannot listen: ${errorMessage(e)}`, { cause: e });
  }
  process.stderr.write(`campaign ${view.name} (${view.id}) served on ${front.origin}: ${personUnits(view).length} session(s), ${sessions.capacity} container(s) at once, idle stop after ${idle} min\n`);
  process.stderr.write(`each person's link: EXPBENCH_CAMPAIGN_KEY=… expbench runs links ${dir} --base ${front.origin}\n`);
  await stopped;
  await front.close();
  await sessions.close();
  process.stderr.write('expbench: stopped\n');
}

function wholeNumber(v: string, name: string, min: number): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min) throw new ExpBenchError('BAD_INPUT', `${name} ${v}`, `expected a whole number ≥ ${min}`);
  return n;
}

/** Whether a run set is a campaign (its spec has `baseline`). */
export function isCampaign(view: RunSetView): boolean {
  return typeof (view.spec as { baseline?: unknown }).baseline === 'object';
}

async function campaignView(dir: string): Promise<RunSetView> {
  const layout = new RunSetLayout(dir);
  const read = await readRunSet(layout.state);
  const view = read ? foldRunSet(read.records) : undefined;
  if (!view || !isCampaign(view)) throw new ExpBenchError('BAD_INPUT', layout.root, 'not a campaign\'s folder (no runset.jsonl of a spec with "baseline")');
  return view;
}

const yn = (b: boolean | undefined) => (b === undefined ? '-' : b ? 'yes' : 'no');
const mark = (v: boolean | null | undefined) => (v === null || v === undefined ? '-' : v ? '✓' : '✖');

/** The organiser's board in the terminal: people as rows (docs/campaigns.md "The board"). */
export function formatCampaignBoard(name: string, rows: readonly CampaignBoardRow[]): string {
  const head = ['person', 'task', 'status', 'phase', 'working', 'pauses', 'attested', 'AI off', 'E', 'D', 'I', 'C'];
  // Every cell printable: the attested name comes from the solver's window (src/core/untrusted/text.ts).
  const body = rows.map((r) => [
    r.person, r.task, r.status, r.phase ?? '-', formatWorking(r.workingMs), String(r.pauses), r.attestedAs ?? '-', yn(r.aiOff),
    mark(r.outcome?.E), mark(r.outcome?.D), mark(r.outcome?.I), mark(r.outcome?.C),
  ].map(printable));
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [`campaign ${name}: ${rows.length} session(s), ${rows.filter((r) => r.submitted).length} submitted`, line(head), ...body.map(line)].join('\n');
}

/** `runs status DIR` of a campaign: the people's board (`--json`: `{name, id, rows}`). */
export async function campaignStatus(dir: string, json: boolean | undefined): Promise<void> {
  const view = await campaignView(dir);
  const rows = await campaignBoard(dir, view);
  if (json) { printJson({ name: view.name, id: view.id, kind: 'campaign', rows }); return; }
  console.log(formatCampaignBoard(view.name, rows));
}

/** Adds `runs links` and `runs timesheet` (campaigns' commands) to the `runs` command. */
export function registerCampaignRuns(runs: Command): void {
  runs.command('links').argument('<dir>', 'the campaign\'s folder')
    .option('--json', 'print [{person, url}] as JSON')
    .option('--base <url>', 'where the campaign is served', 'http://127.0.0.1:8470')
    .option('--reissue <person>', 're-issue this person\'s link first (the old one is refused from then on)')
    .option('--revoke <person>', 'revoke this person\'s link (refused until re-issued)')
    .description('each person\'s link; the tokens are derived from EXPBENCH_CAMPAIGN_KEY (never stored)')
    .action(async (dir: string, opts: { json?: boolean; base: string; reissue?: string; revoke?: string }) => {
      const key = campaignKey();
      const view = await campaignView(dir);
      if (opts.reissue) await reissueLink(dir, view, opts.reissue);
      if (opts.revoke) await revokeLink(dir, view, opts.revoke);
      const links = await campaignLinks(dir, view, key, opts.base);
      if (opts.json) { printJson(links.map((l) => ({ person: l.person, url: l.url ?? null, ...(l.revoked ? { revoked: true } : {}) }))); return; }
      for (const l of links) console.log(`${l.person}\t${l.url ?? '(revoked)'}`);
    });
  runs.command('timesheet').argument('<dir>', 'the campaign\'s folder')
    .option('--csv', 'print CSV (RFC 4180), the default')
    .option('--json', 'print the rows as JSON')
    .description('one row per assignment, opened or not: person, task, session, start, end, working time by the host\'s clock, pauses, submitted')
    .action(async (dir: string, opts: { csv?: boolean; json?: boolean }) => {
      const view = await campaignView(dir);
      const rows = await campaignTimesheet(dir, view);
      if (opts.json) { printJson(rows); return; }
      process.stdout.write(timesheetCsv(rows));
    });
}
