// The proctored window (issue 13), on the real stack (e2e tier: it does not use the tier's own
// window, and runs alone too: npx mocha --timeout 300000 out/test/e2e/proctor.e2e.test.js): the bundled sample prepared for real, the
// work container started by `startProctoredBaseline` (real Docker, expbench/sandbox:1, code-server
// from .cache/tools inside it), the forwarder on a loopback port, and headless Chromium on the
// served URL (playwright-core, Debian's chromium). Screenshots: docs/images/13-*.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import type { Browser, Page } from 'playwright-core';
import { startProctoredBaseline, type ProctoredBaseline } from '../../src/core/flows/proctoredBaseline';
import { SessionLayout } from '../../src/core/layout';
import { bundledDatasetDir } from '../../src/core/paths';
import { FORWARDER_CSP, proctoredContractBreaches } from '../../src/core/proctor';
import { ChannelClient } from '../../src/core/channel/client';
import { ATTESTATION_RULES } from '../../src/core/channel/protocol';
import { execText, listProjectContainers, removeWorkContainer } from '../../src/core/sandbox';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import { launchChromium } from '../harness/browser';
import { requireDocker } from '../harness/docker';
import { repoRoot } from '../harness/paths';
import { Workbench } from '../harness/workbench';

const TASK = 'sample/toycal/0';
const IMAGES = path.join(repoRoot, 'docs', 'images');
/** A sentence of the sample's expected_outcome and a distinctive line of its masked script (samples/repos/toy-calibration/experiments/temperature_scaling.py). */
const OUTCOME = 'Temperature scaling reduces the test ECE from about 0.032 to about 0.012';
const MASKED = 'grid = [0.5 + 0.05 * i for i in range(91)]';

/** A line of the workspace's toycal/model.py (not masked): the search's control. */
const CONTROL = 'self.w = [wi - lr * g / n for wi, g in zip(self.w, gw)]';

/**
 * The whole container file system: every top-level folder that is not a symlink (merged /usr:
 * /lib, /bin, /sbin point into /usr) and not a pseudo file system (/proc, /sys, /dev), plus every
 * process's environment; -D skip leaves out sockets and FIFOs; -a reads binaries as text; LC_ALL=C
 * for speed. Prints `file:match` for each hit (-o). Patterns come as arguments, never through a
 * file or the environment, so the search cannot find its own needles.
 */
const GREP_ALL = 'export LC_ALL=C; grep -rFoa -D skip "$@" $(find / -mindepth 1 -maxdepth 1 -not -type l -not -name proc -not -name sys -not -name dev) 2>/dev/null; grep -Foa "$@" /proc/[0-9]*/environ 2>/dev/null; true';

function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject).end();
  });
}

async function terminalText(page: Page): Promise<string> {
  return page.evaluate(() => Array.from(document.querySelectorAll('.part.panel .xterm-rows > div')).map((r) => (r.textContent ?? '').replace(/\u00a0/g, ' ')).join('\n'));
}

async function waitForTerminal(page: Page, re: RegExp, ms = 90_000): Promise<string> {
  const deadline = Date.now() + ms;
  let text = '';
  while (Date.now() < deadline) {
    text = await terminalText(page);
    if (re.test(text)) return text;
    await page.waitForTimeout(250);
  }
  throw new Error(`the terminal never showed ${re} within ${ms} ms; it shows:\n${text}`);
}

/** A solver build to mount: dist/solver when it was built, else a placeholder extension (said in the log). */
function solverExtension(tmp: string): string {
  const built = path.join(repoRoot, 'dist', 'solver');
  if (fs.existsSync(path.join(built, 'package.json'))) return built;
  const dir = path.join(tmp, 'solver-placeholder');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'solver-placeholder', publisher: 'expbench', version: '0.0.0', engines: { vscode: '^1.90.0' }, main: './extension.js' }));
  fs.writeFileSync(path.join(dir, 'extension.js'), 'exports.activate = () => {};\n');
  console.warn('  [proctor] dist/solver is not built: mounting a placeholder extension');
  return dir;
}

describe('proctored window: the editor runs in the work container (issue 13)', function () {
  this.timeout(240_000);
  let docker: Docker;
  let tmp = '';
  let served: ProctoredBaseline | undefined;
  let browser: Browser | undefined;
  let layout: SessionLayout;
  let session = '';
  const asSolver = (cmd: string, ...args: string[]) => execText(served!.container.container, { cmd: ['bash', '-c', cmd, 'sh', ...args] });

  before(async function () {
    docker = await requireDocker(this);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-proctor-'));
    const task = findTask(await loadDatasets([bundledDatasetDir()]), TASK);
    assert.ok(task, `${TASK} in the bundled sample`);
    layout = new SessionLayout(path.join(tmp, `proctor-${process.pid}`));
    session = path.basename(layout.root);
    const started = Date.now();
    served = await startProctoredBaseline({ task, sessionDir: layout.root, solverExtension: solverExtension(tmp), cacheDir: path.join(tmp, 'cache'), docker });
    console.log(`  [proctor] prepared and served in ${Date.now() - started} ms`);
    fs.mkdirSync(IMAGES, { recursive: true });
  });

  after(async function () {
    await browser?.close();
    await served?.dispose();
    if (docker && session) {
      await removeWorkContainer(docker, session);
      assert.deepEqual(await listProjectContainers(docker, { session }), [], 'no container left behind');
    }
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('docker inspect keeps the mount contract: only its mounts, no Docker socket, NetworkMode none, a non-root user', async function () {
    const info = await served!.container.container.inspect();
    assert.deepEqual(proctoredContractBreaches(info, layout, served!.editor), []);
    assert.equal(info.HostConfig.NetworkMode, 'none');
    assert.equal(info.Config.User, 'solver');
    assert.deepEqual(info.Mounts.map((m) => `${m.Destination} ${m.RW ? 'rw' : 'ro'}`).sort(), [
      '/expbench/channel rw', '/expbench/channel/editor/Machine rw', '/expbench/channel/editor/Machine/settings.json ro',
      '/expbench/channel/editor/User rw', '/expbench/channel/editor/User/settings.json ro',
      '/expbench/editor ro', '/expbench/extensions ro', '/expbench/node/bin/node ro', '/workspace rw',
    ]);
    assert.ok(!info.Mounts.some((m) => /docker\.sock/.test(`${m.Source} ${m.Destination}`)), 'no Docker socket mounted');
    assert.ok(!info.Mounts.some((m) => m.Source.startsWith(layout.private) || m.Source.includes('pristine')), 'no private/ and no pristine cache');
    const ps = await asSolver('ps -eo user=,args= | grep -F code-server/out/node/entry.js | grep -v grep');
    assert.match(ps.stdout, /^solver\s+\/expbench\/node\/bin\/node /m, 'code-server runs as the container user, from the mounted node');
  });

  it('the window\'s settings are the host\'s (read-only, User/ and Machine/ cannot be renamed away), the channel\'s sockets cannot be replaced, no port proxy (issue 26)', async function () {
    // What the solver tries in the container (in /expbench/channel), and the error the kernel gives.
    const tries: Record<string, string> = {
      'write-user-settings': 'echo {} > editor/User/settings.json',
      'write-machine-settings': 'echo {} > editor/Machine/settings.json',
      'remove-user-settings': 'rm editor/User/settings.json',
      'rename-user': 'mv editor/User editor/User.away',
      'rename-machine': 'mv editor/Machine editor/Machine.away',
      'rename-user-data': 'mv editor editor.away',
      'remove-editor-socket': 'rm -f code-server.sock',
      'remove-channel-socket': 'rm -f session.sock',
      'new-file': 'touch planted',
      'bind-beside': '/expbench/node/bin/node -e "require(\'net\').createServer().listen(\'second.sock\').on(\'error\', (e) => { console.error(\'bind: \' + e.code); process.exit(1); })"',
      'write-queue': 'echo > editor/solver-queue.probe && rm editor/solver-queue.probe',
    };
    const got: Record<string, string> = {};
    for (const [what, cmd] of Object.entries(tries)) {
      const r = await asSolver(`cd /expbench/channel && { ${cmd}; }`);
      got[what] = r.exitCode === 0 ? 'done' : (r.stderr.trim().split(': ').pop() ?? r.stderr);
    }
    assert.deepEqual(got, {
      'write-user-settings': 'Read-only file system', 'write-machine-settings': 'Read-only file system',
      'remove-user-settings': 'Device or resource busy', 'rename-user': 'Device or resource busy', 'rename-machine': 'Device or resource busy',
      'rename-user-data': 'Permission denied', 'remove-editor-socket': 'Permission denied', 'remove-channel-socket': 'Permission denied',
      'new-file': 'Permission denied', 'bind-beside': 'EACCES', 'write-queue': 'done',
    });
    // what the window reads is the host's copy
    const inside = JSON.parse((await asSolver('cat /expbench/channel/editor/User/settings.json')).stdout) as Record<string, unknown>;
    assert.deepEqual(inside, JSON.parse(fs.readFileSync(path.join(layout.root, 'editor-settings', 'User.settings.json'), 'utf8')));
    assert.equal(inside['chat.disableAIFeatures'], true);
    assert.deepEqual(inside['extensions.allowed'], { 'expbench.expbench-solver': true });
    // code-server without its proxy, and the forwarder refusing it; the forwarder's CSP on the editor's page
    assert.match((await asSolver('tr "\\0" " " < /proc/1/cmdline')).stdout, /--disable-proxy/);
    const cookie = String((await get(served!.url)).headers['set-cookie']?.[0]).split(';')[0];
    assert.equal((await get(`${served!.forwarder.origin}/proxy/8081/`, { cookie })).status, 403);
    assert.equal((await get(`${served!.forwarder.origin}/absproxy/8081/`, { cookie })).status, 403);
    const page = await get(`${served!.forwarder.origin}/?folder=/workspace`, { cookie });
    assert.equal(page.status, 200);
    assert.ok(String(page.headers['content-security-policy']).includes(FORWARDER_CSP), 'the forwarder\'s policy on the workbench page');
  });

  it('grep -rF over the container file system (extensions and /proc/*/environ included) finds neither the expected outcome nor the masked script', async function () {
    // One pass with a control: the line of toycal/model.py must be found (the search works and
    // reaches the mounts), the needles nowhere.
    const started = Date.now();
    const r = await asSolver(GREP_ALL, '-e', CONTROL, '-e', OUTCOME, '-e', MASKED);
    console.log(`  [proctor] grep of the container file system: ${Date.now() - started} ms`);
    const hits = r.stdout.split('\n').filter(Boolean);
    assert.ok(hits.includes(`/workspace/toycal/model.py:${CONTROL}`), `the control line was not found:\n${r.stdout}`);
    assert.deepEqual(hits.filter((h) => !h.endsWith(`:${CONTROL}`)), [], 'files hold the answer');
    const task = JSON.parse(fs.readFileSync(path.join(layout.private, 'task.json'), 'utf8')) as { raw?: { expected_outcome?: string } };
    assert.ok(JSON.stringify(task).includes(OUTCOME), 'the needle is really a sentence of the task\'s expected_outcome (host side)');
  });

  it('the host\'s cache and the session\'s private/ are not there, and there is no network', async function () {
    const pristine = path.join(os.homedir(), '.cache', 'expbench', 'pristine');
    const ls = await asSolver('ls "$1" "$2" "$3"; echo "exit $?"', pristine, layout.private, path.join(tmp, 'cache'));
    assert.match(ls.stdout, /exit 2/);
    assert.match(ls.stderr, /cannot access/);
    const net = await asSolver('ls /sys/class/net; /expbench/node/bin/node -e \'require("net").connect(80, "1.1.1.1").on("error", (e) => console.log(e.code))\'');
    assert.equal(net.stdout.trim(), 'lo\nENETUNREACH');
  });

  it('the forwarder lets in only the token\'s holder: 401 without it, 403 with a wrong one, a cookie after ?tkn=', async function () {
    const origin = served!.forwarder.origin;
    assert.equal((await get(`${origin}/`)).status, 401);
    assert.equal((await get(`${origin}/?tkn=wrong`)).status, 403);
    const first = await get(served!.url);
    assert.equal(first.status, 302);
    assert.equal(first.headers.location, '/');
    const cookie = String(first.headers['set-cookie']?.[0]).split(';')[0];
    assert.match(String(first.headers['set-cookie']?.[0]), /HttpOnly; SameSite=Strict/);
    const root = await get(`${origin}/`, { cookie });
    assert.equal(root.status, 302, 'code-server sends the browser to its folder');
    assert.equal(root.headers.location, './?folder=/workspace');
    const page = await get(`${origin}/?folder=/workspace`, { cookie });
    assert.equal(page.status, 200);
    assert.match(page.body, /<html/);
    assert.equal((await get(`${origin}/healthz`, { cookie })).status, 200);
    assert.equal((await get(`${origin}/healthz`, { cookie: 'x=1' })).status, 401);
  });

  it('in headless Chromium: the window runs in the container; its terminal finds nothing, reaches nothing; a second browser is refused', async function () {
    browser = await launchChromium();
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    await page.goto(served!.url, { waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 90_000 });
    assert.doesNotMatch(page.url(), /tkn=/, 'the token left the address bar');
    // The solver build's task panel: the brief from the host channel, no repository note, no claimed numbers.
    const wb = new Workbench(page, IMAGES);
    const panel = await wb.webviewFrame(/EXP-Bench: Task \(proctored\)/);
    await panel.locator('article.brief').waitFor({ state: 'visible', timeout: 60_000 });
    await panel.locator('.phase[data-phase="conclusion"]').waitFor({ state: 'attached', timeout: 60_000 });
    const panelText = await panel.locator('body').innerText();
    assert.match(panelText, /Question/);
    assert.doesNotMatch(panelText, /No code_url|Numbers claimed|host side is not running/);
    assert.equal(await panel.locator('ul.claims').count(), 0);
    await wb.waitForText(/EXP-Bench proctored/);
    await wb.runCommand('Notifications: Clear All Notifications');
    await wb.screenshot('13-solver-panel');
    await new Workbench(page, IMAGES).runCommand('Terminal: Create New Terminal');
    await waitForTerminal(page, /solver@task:\/workspace\$/);
    await page.locator('.part.panel .xterm').first().click();
    // The needles are typed split in two (bash joins them), so the screen shows the command but no
    // file can hold the typed line; the docker exec search above is the assertion.
    const half = (s: string) => `'${s.slice(0, 20)}''${s.slice(20)}'`;
    await page.keyboard.type(`S=${'$'}(find / -mindepth 1 -maxdepth 1 -not -type l -not -name proc -not -name sys -not -name dev); LC_ALL=C grep -rlF -D skip -e ${half(OUTCOME)} -e ${half(MASKED)} $S /proc/[0-9]*/environ 2>/dev/null; echo "grep exit $?"`);
    await page.keyboard.press('Enter');
    const found = await waitForTerminal(page, /grep exit [0-2]\b/, 120_000);
    assert.match(found, /grep exit [12]\b/, `the terminal search found something:\n${found}`);
    // the host's pristine cache, and the session's private/ beside the workspace's host folder (read from
    // the mount table, as an attacker would): tried by path, named by their last part only (no machine path on screen)
    await page.keyboard.type(`H=$(awk '$5=="/workspace"{print $4}' /proc/self/mountinfo); for p in ${os.homedir()}/.cache/expbench/pristine "$(dirname "$H")/private"; do ls "$p" >/dev/null 2>&1 && echo "REACHED $p" || echo "no access: \${p##*/}"; done; ls /sys/class/net; timeout 3 bash -c 'echo > /dev/tcp/1.1.1.1/80'; id`);
    await page.keyboard.press('Enter');
    const text = await waitForTerminal(page, /uid=1000\(solver\)/);
    assert.match(text, /no access: pristine/);
    assert.match(text, /no access: private/);
    assert.doesNotMatch(text, /^REACHED \//m, 'a host path was reachable'); // (the typed command holds the word, not a path after it)
    assert.match(text, /Network is unreachable/);
    await new Workbench(page, IMAGES).runCommand('Notifications: Clear All Notifications');
    await new Workbench(page, IMAGES).runCommand('View: Toggle Maximized Panel');
    // maximized: the panel fills the editor area (the editor part is hidden)
    await page.locator('.part.editor').waitFor({ state: 'hidden', timeout: 30_000 });
    await new Workbench(page, IMAGES).screenshot('13-proctored-terminal');
    await new Workbench(page, IMAGES).runCommand('View: Toggle Maximized Panel');

    const other = await (await browser.newContext()).newPage();
    const refused = await other.goto(served!.forwarder.origin + '/', { waitUntil: 'domcontentloaded' });
    assert.equal(refused?.status(), 401);
    await other.screenshot({ path: path.join(IMAGES, '13-second-browser-refused.png') });

    // A folder made with "File: New Folder..." (the Explorer's) belongs to the container user and is writable by it.
    await page.keyboard.press('Control+Shift+E');
    await new Workbench(page, IMAGES).runCommand('File: New Folder...');
    await page.keyboard.type('made-in-editor');
    await page.keyboard.press('Enter');
    const deadline = Date.now() + 20_000;
    while (!fs.existsSync(path.join(layout.workspace, 'made-in-editor')) && Date.now() < deadline) await page.waitForTimeout(200);
    const w = await asSolver('stat -c %U /workspace/made-in-editor && touch /workspace/made-in-editor/x && echo writable');
    assert.equal(w.stdout.trim(), 'solver\nwritable');
  });

  it('when the container stops, the forwarder says so and its button restarts it; saved work is kept', async function () {
    fs.writeFileSync(path.join(layout.workspace, 'notes.txt'), 'saved before the stop\n');
    await served!.container.container.stop({ t: 2 });
    // The window comes back before the host channel does (its socket moved aside): the solver says so, then clears it on connect.
    const sock = path.join(layout.channel, 'session.sock');
    fs.renameSync(sock, `${sock}.away`);
    const page = browser ? await (await browser.newContext()).newPage() : undefined;
    assert.ok(page, 'the browser of the previous test');
    await page.goto(served!.url, { waitUntil: 'domcontentloaded' });
    assert.match(await page.locator('h1').innerText(), /The task container has stopped/);
    await page.screenshot({ path: path.join(IMAGES, '13-container-stopped.png') });
    await Promise.all([page.waitForURL((u) => u.pathname === '/', { timeout: 90_000 }), page.locator('#expbench-restart').click()]);
    await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 90_000 });
    const wb = new Workbench(page, IMAGES);
    const away = await wb.webviewFrame(/EXP-Bench: Task \(proctored\)/);
    await away.getByText(/The host side is not running \(ENOENT\)/).waitFor({ state: 'visible', timeout: 60_000 });
    fs.renameSync(`${sock}.away`, sock);
    // The panel loads its page again when the host answers (the old frame goes): look until a frame shows the brief.
    let shown = '';
    for (const until = Date.now() + 60_000; Date.now() < until; await page.waitForTimeout(500)) {
      const f = await wb.webviewFrame(/EXP-Bench: Task \(proctored\)/).catch(() => undefined);
      const text = f && await f.locator('body').innerText().catch(() => '');
      if (f && text && /Question/.test(text)) {
        shown = text;
        assert.equal(await f.locator('.error').count(), 0, 'no error box left above the brief');
        break;
      }
    }
    assert.match(shown, /Question/, 'the brief came after the host was back');
    assert.doesNotMatch(shown, /host side is not running/);
    await wb.waitForText(/EXP-Bench proctored/);
    await wb.screenshot('13-solver-reconnected');
    assert.equal((await served!.container.container.inspect()).State.Running, true);
    assert.equal((await asSolver('cat /workspace/notes.txt')).stdout, 'saved before the stop\n');
  });
  it('a paused clock pauses the work container (docker pause); the forwarder shows the paused page and its button resumes (issue 26)', async function () {
    const c = new ChannelClient({ socketPath: path.join(layout.channel, 'session.sock'), queueFile: path.join(tmp, 'host-queue.jsonl'), retryMs: 100 });
    try {
      await c.start();
      for (const until = Date.now() + 20_000; !c.status.connected && Date.now() < until;) await new Promise((r) => setTimeout(r, 100));
      await c.call('attest', { baseliner: 'e2e', rules: [...ATTESTATION_RULES] });
      await c.call('clock', { op: 'start' });
      assert.equal((await served!.container.container.inspect()).State.Paused, false);
      await c.call('clock', { op: 'pause', reason: 'lunch' });
      assert.equal((await served!.container.container.inspect()).State.Paused, true, 'docker pause with the clock');
      const page = browser ? await (await browser.newContext()).newPage() : undefined;
      assert.ok(page, 'the browser of the earlier tests');
      await page.goto(served!.url, { waitUntil: 'domcontentloaded' });
      assert.match(await page.locator('h1').innerText(), /The clock is paused/);
      await page.screenshot({ path: path.join(IMAGES, '26-clock-paused.png') });
      await Promise.all([page.waitForURL((u) => u.pathname === '/', { timeout: 60_000 }), page.locator('#expbench-resume').click()]);
      assert.equal((await served!.container.container.inspect()).State.Paused, false, 'running again');
      const st = await c.call('state', {});
      assert.ok(!st.queued && st.result.clock.status === 'running');
      await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 90_000 });
    } finally {
      c.dispose();
    }
  });
});
