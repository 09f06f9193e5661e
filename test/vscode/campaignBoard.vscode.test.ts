// The organiser's board of a campaign (issue 32 item 3) inside the real extension host: a campaign
// of two people × two tasks with real sessions (test/harness/campaignFixture.ts: prepared, worked
// and submitted through the session service, judged by the heuristic pre-judge). The board has
// people as rows, the same rows as `runs status --json` of the bundled CLI; the Run Sets view lists
// the campaign with its people and their sessions; Copy Link, Re-issue and Revoke act per person
// with the key from the environment (never a setting or a file).
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as vscode from 'vscode';
import { CampaignLog, linkStates, personOfToken } from '../../src/core/campaigns';
import type { RunsBoardMessage } from '../../src/protocol/runs';
import { CampaignRowSchema, RunsBoardMessageSchema } from '../../src/protocol/runs';
import type { RunSetBoard } from '../../src/extension/runs/boardPanel';
import type { RunSetsFeature } from '../../src/extension/runs';
import { buildCampaignWithSessions, type CampaignFixture } from '../harness/campaignFixture';
import { repoRoot } from '../harness/paths';
import { api } from './extensionApi';

const KEY = 'organiser-key-'.padEnd(44, 'x');
const MIN = 60_000;

function boardWhere(b: RunSetBoard, check: (m: RunsBoardMessage) => boolean, what: string, ms = 60_000): Promise<RunsBoardMessage> {
  return new Promise((resolve, reject) => {
    if (b.posted && check(b.posted)) { resolve(b.posted); return; }
    const timer = setTimeout(() => { sub.dispose(); reject(new Error(`timed out waiting for ${what}; last board: ${JSON.stringify(b.posted?.campaign?.people)}`)); }, ms);
    const sub = b.onDidPost((m) => { if (check(m)) { clearTimeout(timer); sub.dispose(); resolve(m); } });
  });
}

describe('a campaign\'s board in VS Code: people as rows (real extension host, real sessions)', function () {
  this.timeout(300_000);
  let tmp: string;
  let fx: CampaignFixture;
  let feature: RunSetsFeature;
  const envBefore = process.env.EXPBENCH_CAMPAIGN_KEY;

  before(async () => {
    feature = (await api()).runSets;
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-campaign-vscode-'));
    fx = await buildCampaignWithSessions(tmp);
  });
  after(async () => {
    if (envBefore === undefined) delete process.env.EXPBENCH_CAMPAIGN_KEY; else process.env.EXPBENCH_CAMPAIGN_KEY = envBefore;
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    if (feature && fx) await feature.index.forget(fx.dir);
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('Open Run Set on a campaign shows people as rows, the same rows as `runs status --json`', async () => {
    assert.equal(await vscode.commands.executeCommand<string>('expbench.runs.open', { dir: fx.dir }), fx.dir);
    const board = feature.boards.get(fx.dir)!;
    const m = await boardWhere(board, (x) => x.campaign !== undefined, 'the campaign part');
    assert.ok(RunsBoardMessageSchema.safeParse(JSON.parse(JSON.stringify(m))).success, 'the posted board passes the protocol');
    const c = m.campaign!;
    assert.deepEqual(c.people.map((p) => [p.person, p.name ?? '', p.generation, p.revoked, p.workingMs]), [
      ['ana', 'Ana Ruiz', 1, false, 35 * MIN], ['bo', '', 1, false, 12 * MIN],
    ]);
    assert.deepEqual(c.rows.map((r) => [r.person, r.task, r.status, r.opened, r.workingMs, r.pauses, r.submitted, r.attestedAs ?? '-', r.aiOff ?? '-']), [
      ['ana', 'fixture2026/90001/0', 'submitted', true, 30 * MIN, 1, true, 'Ana Ruiz', true],
      ['ana', 'fixture2026/90001/1', 'paused', true, 5 * MIN, 1, false, '-', true],
      ['bo', 'fixture2026/90001/0', 'paused', true, 12 * MIN, 0, false, 'bo', true],
      ['bo', 'fixture2026/90001/1', 'not started', false, 0, 0, false, '-', '-'],
    ]);
    const judged = c.rows[0].outcome!;
    assert.equal(judged.submitted, true);
    assert.ok([judged.D, judged.I].every((v) => typeof v === 'boolean'), `the heuristic pre-judge's D and I: ${JSON.stringify(judged)}`);
    assert.equal(judged.C, null, 'the heuristic pre-judge does not judge conclusions');
    assert.equal(judged.E, null, 'not verified: E not computable');
    assert.equal(c.rows[1].outcome, undefined, 'nothing of the judge before submit');
    // `runs status --json` of the bundled CLI: the same rows
    const out = await promisify(execFile)(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'runs', 'status', fx.dir, '--json'], { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
    const cliRows = (JSON.parse(out.stdout) as { rows: unknown[] }).rows;
    assert.deepEqual(cliRows, JSON.parse(JSON.stringify(c.rows)));
    for (const r of cliRows) assert.ok(CampaignRowSchema.safeParse(r).success);
  });

  it('the Run Sets view lists the campaign, its people and each person\'s sessions', async () => {
    const roots = await feature.tree.getChildren();
    const node = roots.find((n) => n.kind === 'runSet' && n.dir === fx.dir)!;
    assert.ok(node, 'the campaign is listed');
    const item = feature.tree.getTreeItem(node);
    assert.equal(item.label, 'pilot baseline, two people');
    assert.equal(item.description, 'campaign: 2 people, 1/4 submitted');
    assert.equal(item.contextValue, 'expbench.campaign', 'no Resume or Cancel of agents\' units');
    const people = await feature.tree.getChildren(node);
    assert.deepEqual(people.map((p) => [feature.tree.getTreeItem(p).label, feature.tree.getTreeItem(p).description, feature.tree.getTreeItem(p).contextValue]), [
      ['ana (Ana Ruiz)', '1/2 submitted · 35:00', 'expbench.campaignPerson'],
      ['bo', '0/2 submitted · 12:00', 'expbench.campaignPerson'],
    ]);
    const anas = await feature.tree.getChildren(people[0]);
    assert.deepEqual(anas.map((s) => [feature.tree.getTreeItem(s).label, feature.tree.getTreeItem(s).description]), [
      ['fixture2026/90001/0', 'submitted · 30:00 · 1 pause(s)'], ['fixture2026/90001/1', 'paused · design · 5:00 · 1 pause(s)'],
    ]);
    assert.equal(feature.tree.getTreeItem(anas[0]).command?.command, 'expbench.runs.openUnit');
  });

  it('per person: Copy Link puts the current link on the clipboard (key from the environment), Re-issue refuses the old one, Revoke refuses all', async () => {
    const board = feature.boards.get(fx.dir)!;
    delete process.env.EXPBENCH_CAMPAIGN_KEY;
    const noKey = await vscode.commands.executeCommand('expbench.campaign.copyLink', { dir: fx.dir, person: 'bo' });
    assert.equal(noKey, undefined, 'no key in the environment or SecretStorage: refused (the error names EXPBENCH_CAMPAIGN_KEY)');
    process.env.EXPBENCH_CAMPAIGN_KEY = KEY;
    const states = async () => linkStates((await new CampaignLog(fx.dir).read()).records);
    const tokenOnClipboard = async () => new URL(await vscode.env.clipboard.readText()).searchParams.get('tkn')!;
    assert.equal(await vscode.commands.executeCommand('expbench.campaign.copyLink', { dir: fx.dir, person: 'bo' }), 'bo\'s link is copied');
    const first = await tokenOnClipboard();
    assert.match(await vscode.env.clipboard.readText(), /^http:\/\/127\.0\.0\.1:8470\/\?tkn=[\w-]{43}$/);
    assert.equal(personOfToken(KEY, fx.view.id, await states(), first), 'bo');
    // re-issue and revoke ask first (a modal): here the command's {confirmed: true} answers it
    const r = await vscode.commands.executeCommand<string>('expbench.campaign.reissueLink', { dir: fx.dir, person: 'bo', confirmed: true });
    assert.match(r, /^bo's link re-issued \(generation \d\); the new link is copied$/);
    const second = await tokenOnClipboard();
    assert.notEqual(second, first);
    assert.equal(personOfToken(KEY, fx.view.id, await states(), first), undefined, 'the old link is refused');
    assert.equal(personOfToken(KEY, fx.view.id, await states(), second), 'bo');
    let m = await boardWhere(board, (x) => (x.campaign?.people[1].generation ?? 0) >= 2, 'bo re-issued on the board');
    await vscode.commands.executeCommand('expbench.campaign.revokeLink', { dir: fx.dir, person: 'bo', confirmed: true });
    assert.equal(personOfToken(KEY, fx.view.id, await states(), second), undefined, 'revoked: refused');
    m = await boardWhere(board, (x) => x.campaign?.people[1].revoked === true, 'bo revoked on the board');
    assert.equal(m.campaign!.people[0].revoked, false, 'ana keeps her link');
    assert.equal(await vscode.commands.executeCommand('expbench.campaign.copyLink', { dir: fx.dir, person: 'bo' }), undefined, 'a revoked link is not copied');
    const people = await feature.tree.getChildren((await feature.tree.getChildren()).find((n) => n.kind === 'runSet' && n.dir === fx.dir));
    assert.equal(feature.tree.getTreeItem(people[1]).contextValue, 'expbench.campaignPerson.revoked');
    assert.match(String(feature.tree.getTreeItem(people[1]).description), /link revoked$/);
    // nothing of the key or a token in the campaign's folder
    const log = await fsp.readFile(path.join(fx.dir, 'campaign.jsonl'), 'utf8');
    assert.ok(!log.includes(first) && !log.includes(second) && !log.includes(KEY));
  });
});
