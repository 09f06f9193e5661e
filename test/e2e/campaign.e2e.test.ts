// Issue 32's must-show, on the real stack (e2e tier: it does not use the tier's own window, and
// runs alone too: npx mocha --timeout 900000 out/test/e2e/campaign.e2e.test.js): a campaign of two
// people × two tasks made by `expbench campaign create` and served from this host by `expbench
// campaign serve` (the bundled CLI, real Docker, expbench/sandbox:1, code-server inside each work
// container), each person in their own headless Chromium (playwright-core) with the link `runs
// links` gives. The two tasks are the run-set tests' fixture paper (test/harness/runSetFixture.ts:
// tasks made from the bundled sample's data in a test folder; the sample itself has one task).
// Screenshots: docs/images/32-landing.png, 32-being-prepared.png, 32-queue.png.
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { SessionLayout } from '../../src/core/layout';
import { findEditorInstall, proctoredContractBreaches } from '../../src/core/proctor';
import { foldRunSet, readRunSet, RunSetLayout, type RunSetView } from '../../src/core/runs';
import { findWorkContainer, listProjectContainers, removeWorkContainer } from '../../src/core/sandbox';
import { readState } from '../../src/core/session/store';
import { launchChromium } from '../harness/browser';
import { requireDocker } from '../harness/docker';
import { repoRoot } from '../harness/paths';
import { until } from '../harness/until';
import { buildRunSetFixture } from '../harness/runSetFixture';
import { Workbench } from '../harness/workbench';
import { cli, OFFLINE_ENV } from '../unit/cli.helpers';

const IMAGES = path.join(repoRoot, 'docs', 'images');
const CLI = path.join(repoRoot, 'dist', 'cli.js');
/** The organiser's key: only in the environment of the organiser's commands (never a file or an argument). */
const KEY = `e2e-${'k'.repeat(40)}`;
const SPEC = `{
  "version": 1,
  "name": "two people, two tasks",
  "datasets": ["exp-bench"],
  "tasks": ["fixture2026/90001/0", "fixture2026/90001/1"],
  "baseline": {"baseliners": [{"id": "ana", "name": "Ana Ruiz"}, {"id": "bo"}], "assignment": "balanced"}
}`;

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    }).on('error', reject);
  });
}

interface Person { id: string; link: string; cookie: string; ctx: BrowserContext; page: Page; session: string; layout: SessionLayout }

describe('issue 32: a campaign of two people × two tasks served from one host (expbench campaign serve)', function () {
  this.timeout(900_000);
  let docker: Docker;
  let tmp = '';
  let dir = '';
  let serve: ChildProcess | undefined;
  let serveLog = '';
  let origin = '';
  let browser: Browser | undefined;
  let view: RunSetView;
  const people: Record<string, Person> = {};
  const env = { ...OFFLINE_ENV, EXPBENCH_CAMPAIGN_KEY: KEY };
  let t0 = '';

  before(async function () {
    docker = await requireDocker(this);
    assert.ok(fs.existsSync(path.join(repoRoot, 'dist', 'solver', 'package.json')), 'dist/solver is built (npm run build): the windows submit through it');
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-campaign-e2e-'));
    await buildRunSetFixture(tmp, 2);
    fs.writeFileSync(path.join(tmp, 'campaign.jsonc'), SPEC);
    dir = path.join(tmp, 'campaign');
    const made = await cli(['campaign', 'create', path.join(tmp, 'campaign.jsonc'), '--out', dir], { env: OFFLINE_ENV });
    assert.equal(made.code, 0, made.stderr);
    view = foldRunSet((await readRunSet(new RunSetLayout(dir).state))!.records)!;
    t0 = new Date().toISOString();
    // The capacity is the machine's (no --capacity): the two windows below must fit at once. A
    // session with no window connected stops after 30 s (a connected window keeps it).
    serve = spawn(process.execPath, [CLI, 'campaign', 'serve', dir, '--port', '0', '--idle-minutes', '0.5', '--cache', path.join(tmp, 'cache')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    serve.stdout!.setEncoding('utf8').on('data', (d: string) => { serveLog += d; });
    serve.stderr!.setEncoding('utf8').on('data', (d: string) => { serveLog += d; });
    origin = await until('campaign serve to listen', async () => /served on (http:\/\/127\.0\.0\.1:\d+)/.exec(serveLog)?.[1] ?? (serve!.exitCode !== null ? Promise.reject(new Error(serveLog)) : undefined), 60_000);
    assert.match(serveLog, /\d+ container\(s\) at once/);
    browser = await launchChromium();
    fs.mkdirSync(IMAGES, { recursive: true });
  });

  after(async function () {
    await browser?.close();
    if (serve && serve.exitCode === null) {
      serve.kill('SIGTERM');
      await until('campaign serve to stop', async () => (serve!.exitCode !== null ? true : undefined), 120_000).catch(() => serve!.kill('SIGKILL'));
    }
    if (docker && view) {
      for (const u of view.units) await removeWorkContainer(docker, path.basename(u.dir)).catch(() => undefined);
      for (const u of view.units) assert.deepEqual(await listProjectContainers(docker, { session: path.basename(u.dir) }), [], 'no container left behind');
    }
    if (this.currentTest?.state === 'failed' || process.env.EXPBENCH_E2E_KEEP) console.log(serveLog);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('each person\'s link opens only their own landing page and sessions; the other\'s session and a wrong token are refused', async function () {
    const links = await cli(['runs', 'links', dir, '--json', '--base', origin], { env });
    assert.equal(links.code, 0, links.stderr);
    const list = JSON.parse(links.stdout) as Array<{ person: string; url: string }>;
    assert.deepEqual(list.map((l) => l.person), ['ana', 'bo']);
    for (const { person, url } of list) {
      const first = await get(url);
      assert.equal(first.status, 303);
      const cookie = String(first.headers['set-cookie']?.[0]).split(';')[0];
      const ctx = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await ctx.newPage();
      await page.goto(url, { waitUntil: 'domcontentloaded' });
      assert.equal(new URL(page.url()).pathname, '/');
      assert.doesNotMatch(page.url(), /tkn=/, 'the token left the address bar');
      assert.equal(await page.locator('h1').innerText(), `Your tasks, ${person}`);
      const rows = await page.locator('tbody tr').allInnerTexts();
      assert.deepEqual(rows.map((r) => r.split('\t')[0]), ['fixture2026/90001/0', 'fixture2026/90001/1'], `${person}'s landing page lists their two tasks`);
      const mine = view.units.filter((u) => u.actor.kind === 'human' && u.actor.baseliner === person);
      const hrefs = await page.locator('tbody a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      assert.deepEqual(hrefs, mine.map((u) => `/s/${u.name}/`));
      people[person] = { id: person, link: url, cookie, ctx, page, session: mine[0].name, layout: new SessionLayout(new RunSetLayout(dir).session(mine[0].dir)) };
    }
    // the other person's sessions: 403 with a valid cookie; a wrong token 403; no cookie 401
    for (const [me, other] of [['ana', 'bo'], ['bo', 'ana']]) {
      for (const u of view.units.filter((x) => x.actor.kind === 'human' && x.actor.baseliner === other)) {
        const r = await get(`${origin}/s/${u.name}/`, { cookie: people[me].cookie });
        assert.equal(r.status, 403, `${me} opening ${u.name}`);
        assert.match(r.body, /Not your task/);
      }
      const other$ = await people[me].page.goto(`${origin}/s/${people[other].session}/`, { waitUntil: 'domcontentloaded' });
      assert.equal(other$?.status(), 403, `${me}'s browser on ${other}'s session`);
    }
    assert.equal((await get(`${origin}/?tkn=${'A'.repeat(43)}`)).status, 403, 'a wrong token');
    assert.equal((await get(`${origin}/?tkn=wrong`)).status, 403, 'a malformed token');
    assert.equal((await get(`${origin}/s/${people.ana.session}/`)).status, 401, 'no cookie');
    assert.equal((await get(`${origin}/s/${people.ana.session}/`, { cookie: 'expbench_campaign=' + 'B'.repeat(43) })).status, 403, 'a forged cookie');
  });

  it('each opens their first task: "being prepared" until ready, then the editor of a work container of their own (docker inspect: the contract, no network, no Docker socket, non-root)', async function () {
    // Both at once: the first open queues and starts each session (prepared lazily).
    const opened = await Promise.all(Object.values(people).map(async (p) => {
      const r = await p.page.goto(`${origin}/s/${p.session}/`, { waitUntil: 'domcontentloaded' });
      return { status: r?.status(), h1: await p.page.locator('h1').innerText().catch(() => '') };
    }));
    for (const o of opened) {
      assert.equal(o.status, 503);
      assert.match(o.h1, /Your task is being prepared/);
    }
    await people.ana.page.screenshot({ path: path.join(IMAGES, '32-being-prepared.png') });
    // The page reloads itself (Refresh: 5) until the session's editor answers under /s/<session>/.
    await Promise.all(Object.values(people).map((p) => p.page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 600_000 })));
    const editor = await findEditorInstall();
    const ids = new Set<string>();
    for (const p of Object.values(people)) {
      assert.ok(new URL(p.page.url()).pathname.startsWith(`/s/${p.session}/`), `${p.id}'s editor is under its session's prefix: ${p.page.url()}`);
      await new Workbench(p.page, IMAGES).waitForText(/EXP-Bench proctored/);
      const found = await findWorkContainer(docker, path.basename(p.layout.root));
      assert.ok(found, `${p.id}'s work container`);
      ids.add(found.id);
      const info = await found.container.inspect();
      assert.deepEqual(proctoredContractBreaches(info, p.layout, editor), [], `${p.id}'s container keeps the mount contract`);
      assert.equal(info.HostConfig.NetworkMode, 'none');
      assert.equal(info.Config.User, 'solver');
      assert.equal(info.State.Running, true);
      assert.ok(!info.Mounts.some((m) => /docker\.sock/.test(`${m.Source} ${m.Destination}`)), 'no Docker socket');
      assert.ok(!info.Mounts.some((m) => m.Source.startsWith(p.layout.private)), 'no private/');
      assert.ok(!(info.Config.Env ?? []).some((e) => e.includes(KEY) || e.includes(p.cookie.split('=')[1])), 'neither the key nor the token in the container\'s environment');
      assert.ok(!(info.Config.Cmd ?? []).join(' ').includes(p.cookie.split('=')[1]), 'nor on its command line');
    }
    assert.equal(ids.size, 2, 'two containers, one per person');
    // the campaign's cookie is not passed on to the editor: the window's requests reach code-server without it
    assert.ok(!serveLog.includes(KEY) && !Object.values(people).some((p) => serveLog.includes(p.cookie.split('=')[1])), 'no key or token in the serve log');
  });

  it('a paused clock pauses that person\'s container only; both submit from their windows', async function () {
    for (const p of Object.values(people)) {
      const wb = new Workbench(p.page, IMAGES);
      await p.page.keyboard.press('F1');
      const quick = p.page.locator('.quick-input-widget');
      await quick.locator('input').fill('>EXP-Bench: Start / Pause / Resume the Clock');
      await quick.locator('.monaco-list-row').filter({ hasText: /Start \/ Pause \/ Resume the Clock/ }).first().click();
      await quick.locator('.quick-input-title', { hasText: /your name or baseliner id/ }).waitFor({ state: 'visible', timeout: 60_000 });
      await quick.locator('input').fill(p.id);
      await quick.locator('input').press('Enter');
      await wb.confirmDialog('I attest');
      await until(`${p.id}'s clock running`, async () => ((await readState(p.layout.state))?.clock.segments.at(-1)?.end === undefined && (await readState(p.layout.state))?.clock.segments.length ? true : undefined), 60_000);
    }
    // ana pauses her clock: her container is frozen (docker pause), bo's runs on
    const ana = people.ana;
    const anaC = (await findWorkContainer(docker, path.basename(ana.layout.root)))!.container;
    const boC = (await findWorkContainer(docker, path.basename(people.bo.layout.root)))!.container;
    await new Workbench(ana.page, IMAGES).runCommand('EXP-Bench: Start / Pause / Resume the Clock');
    await until('ana\'s container paused with her clock', async () => ((await anaC.inspect()).State.Paused ? true : undefined), 60_000);
    assert.equal((await boC.inspect()).State.Paused, false, 'bo\'s container is not paused');
    const paused = await ana.page.goto(`${origin}/s/${ana.session}/`, { waitUntil: 'domcontentloaded' });
    assert.equal(paused?.status(), 503);
    assert.match(await ana.page.locator('h1').innerText(), /The clock is paused/);
    await Promise.all([ana.page.waitForURL((u) => u.pathname === `/s/${ana.session}/`, { timeout: 60_000 }), ana.page.locator('#expbench-resume').click()]);
    assert.equal((await anaC.inspect()).State.Paused, false, 'running again');
    await ana.page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 120_000 });
    await new Workbench(ana.page, IMAGES).waitForText(/EXP-Bench proctored/);

    for (const p of Object.values(people)) {
      const wb = new Workbench(p.page, IMAGES);
      await wb.runCommand('Notifications: Clear All Notifications');
      await wb.runCommand('EXP-Bench: Submit');
      await wb.confirmDialog('Submit');
      await until(`the host to record ${p.id}'s submission`, async () => ((await readState(p.layout.state))?.submitted ? true : undefined), 180_000);
      await wb.waitForText(/submitted\. Thank you/);
    }
  });

  it('runs status --json shows both submitted; runs timesheet --csv has four rows with working times from the host\'s clock; the landing page says submitted', async function () {
    const status = await cli(['runs', 'status', dir, '--json'], { env: OFFLINE_ENV });
    assert.equal(status.code, 0, status.stderr);
    const board = JSON.parse(status.stdout) as { kind: string; rows: Array<{ person: string; session: string; status: string; submitted: boolean; opened: boolean; pauses: number; attestedAs?: string }> };
    assert.equal(board.kind, 'campaign');
    assert.deepEqual(board.rows.map((r) => `${r.person} ${r.session} ${r.status}`), view.units.map((u) => {
      const a = u.actor as { baseliner: string };
      return `${a.baseliner} ${u.name} ${Object.values(people).some((p) => p.session === u.name) ? 'submitted' : 'not started'}`;
    }));
    assert.deepEqual(board.rows.filter((r) => r.submitted).map((r) => [r.person, r.opened, r.attestedAs, r.pauses]), [['ana', true, 'ana', 1], ['bo', true, 'bo', 0]]);

    const sheet = await cli(['runs', 'timesheet', dir, '--csv'], { env: OFFLINE_ENV });
    assert.equal(sheet.code, 0, sheet.stderr);
    const lines = sheet.stdout.split('\r\n').filter(Boolean);
    assert.equal(lines[0], 'person,task,session,start,end,working_seconds,working_hms,pauses,submitted,gave_up');
    assert.equal(lines.length, 5, 'a header and four rows');
    const now = new Date().toISOString();
    for (const line of lines.slice(1)) {
      const [person, , session, start, end, secs, , pauses, submitted] = line.split(',');
      const p = Object.values(people).find((x) => x.session === session);
      if (!p) { assert.deepEqual([start, end, secs, submitted], ['', '', '0.000', 'false'], `${person}'s unopened session`); continue; }
      assert.equal(submitted, 'true');
      // by the host's clock: within this test's run, and the clock's own segments of the host's state.json
      assert.ok(start >= t0 && end <= now && start < end, `${session}: ${start} .. ${end} within ${t0} .. ${now}`);
      const state = (await readState(p.layout.state))!;
      const segMs = state.clock.segments.reduce((s, g) => s + (Date.parse(g.end ?? end) - Date.parse(g.start)), 0);
      assert.ok(Math.abs(Number(secs) * 1000 - segMs) <= 1, `${session}: ${secs} s is the clock's segments (${segMs} ms)`);
      assert.ok(Number(secs) > 0 && Number(secs) * 1000 <= Date.parse(end) - Date.parse(start), `${session}: working time within start .. end`);
      assert.equal(pauses, p.id === 'ana' ? '1' : '0');
    }
    const ana = people.ana;
    await ana.page.goto(`${origin}/`, { waitUntil: 'domcontentloaded' });
    const rows = await ana.page.locator('tbody tr').allInnerTexts();
    assert.match(rows[0], /fixture2026\/90001\/0\tsubmitted/);
    assert.match(rows[1], /fixture2026\/90001\/1\tnot started/);
    await ana.page.screenshot({ path: path.join(IMAGES, '32-landing.png') });
    // ana's window is gone (she is on her landing page): her session stops when idle, its container kept
    const anaC = (await findWorkContainer(docker, path.basename(ana.layout.root)))!.container;
    const stoppedLine = new RegExp(`${ana.session.replace(/\./g, '\\.')}: stopped \\(idle\\)`);
    await until('the serve to say ana\'s idle session stopped', async () => (stoppedLine.test(serveLog) ? true : undefined), 180_000);
    assert.equal((await anaC.inspect()).State.Running, false, 'ana\'s container is stopped');
    assert.equal((await findWorkContainer(docker, path.basename(people.bo.layout.root)))!.state, 'running', 'bo\'s window is connected: his session runs on');
    // a submitted task is closed: opening it again starts nothing
    const again = await get(`${origin}/s/${ana.session}/`, { cookie: ana.cookie });
    assert.equal(again.status, 503);
    assert.match(again.body, /submitted this task/);
    assert.equal((await anaC.inspect()).State.Running, false);
  });

  it('SIGTERM stops the serve cleanly: the containers stopped and kept, the work kept', async function () {
    fs.writeFileSync(path.join(people.bo.layout.workspace, 'after-submit.txt'), 'kept\n');
    serve!.kill('SIGTERM');
    const code = await until('campaign serve to exit', async () => serve!.exitCode ?? undefined, 120_000);
    assert.equal(code, 0, serveLog);
    assert.match(serveLog, /stopping the campaign/);
    for (const p of Object.values(people)) {
      const found = await findWorkContainer(docker, path.basename(p.layout.root));
      assert.ok(found, `${p.id}'s container is kept`);
      const info = await found.container.inspect();
      assert.equal(info.State.Running, false, `${p.id}'s container is stopped`);
      assert.ok(fs.existsSync(p.layout.state), `${p.id}'s session is kept`);
    }
    assert.equal(fs.readFileSync(path.join(people.bo.layout.workspace, 'after-submit.txt'), 'utf8'), 'kept\n');
    assert.equal((await get(origin).catch((e: Error) => ({ status: e.message }))).status !== 200, true, 'the front door is closed');
  });

  it('served again with --capacity 1: the second person waits in the queue with their position until the first\'s idle session stops, then gets their editor', async function () {
    serveLog = '';
    serve = spawn(process.execPath, [CLI, 'campaign', 'serve', dir, '--port', '0', '--capacity', '1', '--idle-minutes', '0.25', '--cache', path.join(tmp, 'cache')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    serve.stdout!.setEncoding('utf8').on('data', (d: string) => { serveLog += d; });
    serve.stderr!.setEncoding('utf8').on('data', (d: string) => { serveLog += d; });
    origin = await until('campaign serve to listen', async () => /served on (http:\/\/127\.0\.0\.1:\d+)/.exec(serveLog)?.[1] ?? (serve!.exitCode !== null ? Promise.reject(new Error(serveLog)) : undefined), 60_000);
    assert.match(serveLog, /1 container\(s\) at once/);
    const second = (person: string) => view.units.filter((u) => u.actor.kind === 'human' && u.actor.baseliner === person)[1];
    const [anaU, boU] = [second('ana'), second('bo')];
    const ana = people.ana;
    const bo = people.bo;
    const first = await ana.page.goto(`${origin}/s/${anaU.name}/`, { waitUntil: 'domcontentloaded' });
    assert.equal(first?.status(), 503);
    // bo comes while ana's session holds the only place: he is number 1 in the queue
    const queued = await bo.page.goto(`${origin}/s/${boU.name}/`, { waitUntil: 'domcontentloaded' });
    assert.equal(queued?.status(), 503);
    assert.match(await bo.page.locator('body').innerText(), /Your task is being prepared\s+You are number 1 in the queue\./);
    await bo.page.screenshot({ path: path.join(IMAGES, '32-queue.png') });
    await ana.page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 600_000 });
    assert.equal(await findWorkContainer(docker, path.basename(boU.dir)), undefined, 'bo\'s session is not started while the place is taken');
    assert.match(await (await get(`${origin}/s/${boU.name}/`, { cookie: bo.cookie })).body, /You are number 1 in the queue/);
    // ana leaves her window: her session goes idle and stops; bo's page (reloading itself) gets his editor
    await ana.page.goto(`${origin}/`, { waitUntil: 'domcontentloaded' });
    await bo.page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 600_000 });
    assert.ok(new URL(bo.page.url()).pathname.startsWith(`/s/${boU.name}/`));
    const anaC = (await findWorkContainer(docker, path.basename(anaU.dir)))!;
    assert.equal((await anaC.container.inspect()).State.Running, false, 'ana\'s idle container stopped before bo\'s started');
    assert.equal((await findWorkContainer(docker, path.basename(boU.dir)))?.state, 'running');
    assert.match(serveLog, new RegExp(`${anaU.name.replace(/\./g, '\\.')}: stopped \\(idle\\)`));
    serve!.kill('SIGINT');
    assert.equal(await until('campaign serve to exit', async () => serve!.exitCode ?? undefined, 120_000), 0, serveLog);
    assert.equal((await (await findWorkContainer(docker, path.basename(boU.dir)))!.container.inspect()).State.Running, false, 'SIGINT stopped bo\'s container');
  });
});
