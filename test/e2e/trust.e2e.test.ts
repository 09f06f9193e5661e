// Issue 26, the attack of its "Why", on the real stack (e2e tier: it does not use the tier's own
// window, and runs alone too: npx mocha --timeout 600000 out/test/e2e/trust.e2e.test.js): the
// bundled sample served as a proctored window (real Docker, code-server in the work container,
// headless Chromium), the attack typed into the window's own terminal as the baseliner
// did (a clean filter that copies the session's private/ and the masked script out of the
// pristine cache into .git/leak, records `id` and `docker ps`), then Submit from the window, as
// the baseliner would. The host's submission, patch, verifier and judge run nothing of it, and
// nothing of private/ or the pristine cache appears anywhere the solver can read. Screenshot:
// docs/images/26-attack-after-submit.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import type { Browser, Page } from 'playwright-core';
import { startProctoredBaseline, type ProctoredBaseline } from '../../src/core/flows/proctoredBaseline';
import { SessionLayout } from '../../src/core/layout';
import { bundledDatasetDir } from '../../src/core/paths';
import { execText, listProjectContainers, removeWorkContainer } from '../../src/core/sandbox';
import { readEvents } from '../../src/core/session/events';
import { readState } from '../../src/core/session/store';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import { readManifest } from '../../src/core/workspace/manifest';
import { launchChromium } from '../harness/browser';
import { requireDocker } from '../harness/docker';
import { repoRoot } from '../harness/paths';
import { Workbench } from '../harness/workbench';

const TASK = 'sample/toycal/0';
const IMAGES = path.join(repoRoot, 'docs', 'images');
/** A sentence of the sample's expected_outcome and a line of its masked script (as in proctor.e2e.test.ts). */
const OUTCOME = 'Temperature scaling reduces the test ECE from about 0.032 to about 0.012';
const MASKED = 'grid = [0.5 + 0.05 * i for i in range(91)]';

/** As proctor.e2e.test.ts: every top-level folder but the pseudo file systems, and every process's environment. */
const GREP_ALL = 'export LC_ALL=C; grep -rFoa -D skip "$@" $(find / -mindepth 1 -maxdepth 1 -not -type l -not -name proc -not -name sys -not -name dev) 2>/dev/null; grep -Foa "$@" /proc/[0-9]*/environ 2>/dev/null; true';

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

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function solverExtension(): string {
  const built = path.join(repoRoot, 'dist', 'solver');
  assert.ok(fs.existsSync(path.join(built, 'package.json')), 'dist/solver is built (npm run build): the window submits through it');
  return built;
}

describe('issue 26: the attack of the issue, typed into the proctored window, then Submit', function () {
  this.timeout(600_000);
  let docker: Docker;
  let tmp = '';
  let served: ProctoredBaseline | undefined;
  let browser: Browser | undefined;
  let layout: SessionLayout;
  let session = '';
  const asSolver = (cmd: string, ...args: string[]) => execText(served!.container.container, { cmd: ['bash', '-c', cmd, 'sh', ...args] });

  before(async function () {
    docker = await requireDocker(this);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-attack-'));
    const task = findTask(await loadDatasets([bundledDatasetDir()]), TASK);
    assert.ok(task, `${TASK} in the bundled sample`);
    layout = new SessionLayout(path.join(tmp, `attack-${process.pid}`));
    session = path.basename(layout.root);
    served = await startProctoredBaseline({ task, sessionDir: layout.root, solverExtension: solverExtension(), cacheDir: path.join(tmp, 'cache'), docker });
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

  it('the filters run nothing on the host: .git/leak stays empty, no file of private/ or of the cache reaches the container, the work is submitted', async function () {
    const manifest = await readManifest(layout.root);
    browser = await launchChromium();
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await page.goto(served!.url, { waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 90_000 });
    const wb = new Workbench(page, IMAGES);
    await wb.waitForText(/EXP-Bench proctored/);
    // As a baseliner begins: the name and the rules (the host answers nothing else before), then the clock.
    await page.keyboard.press('F1');
    const quick = page.locator('.quick-input-widget');
    await quick.locator('input').fill('>EXP-Bench: Start / Pause / Resume the Clock');
    await quick.locator('.monaco-list-row').filter({ hasText: /Start \/ Pause \/ Resume the Clock/ }).first().click();
    await quick.locator('.quick-input-title', { hasText: /your name or baseliner id/ }).waitFor({ state: 'visible', timeout: 60_000 });
    await quick.locator('input').fill('b-026');
    await quick.locator('input').press('Enter');
    await wb.confirmDialog('I attest');
    await until('the attestation and the clock', async () => {
      const types = (await readEvents(layout.events)).events.map((e) => e.type);
      return types.includes('baseliner.attested') && types.includes('clock.started') ? true : undefined;
    }, 60_000);
    await wb.runCommand('Terminal: Create New Terminal');
    await waitForTerminal(page, /solver@task:\/workspace\$/);
    await page.locator('.part.panel .xterm').first().click();
    const type = async (line: string) => { await page.keyboard.type(line); await page.keyboard.press('Enter'); };
    // The first round, as typed there.
    await type(`H=$(awk '$5=="/workspace"{print $4}' /proc/self/mountinfo)`);
    await type(`printf '%s\\n' "cp -r $(dirname $H)/private/. $H/.git/leak/; id > $H/.git/leak/whoami; exit 1" > .git/x.sh`);
    await type('git config filter.x.clean "sh .git/x.sh"; git config filter.x.required true');
    await type('echo "* filter=x" > .git/info/attributes; echo scratch > scratch.txt');
    // Its second round: the masked script out of the pristine cache, and the engine's containers.
    await type(`printf '%s\\n' "git --git-dir=${manifest.source.cacheRepo} show ${manifest.commit}:experiments/temperature_scaling.py > $H/.git/leak/masked.py; docker ps > $H/.git/leak/ps; cat" > .git/y.sh`);
    await type('git config filter.y.clean "sh .git/y.sh"; echo "*.txt filter=y" > .gitattributes; mkdir -p .git/leak; echo planted');
    await waitForTerminal(page, /^planted$/m);
    // What the window said before (the attestation's prompt, code-server's tips) is cleared: the screenshot shows what Submit left.
    await wb.runCommand('Notifications: Clear All Notifications');

    await wb.runCommand('EXP-Bench: Submit');
    await wb.confirmDialog('Submit');
    await until('the host to record the submission', async () => ((await readState(layout.state))?.submitted ? true : undefined), 120_000);
    await wb.waitForText(/submitted\. Thank you/);
    // The flow's verifier and judge (on the frozen submission) run too.
    await until('verify.finished and judge.finished', async () => {
      const types = (await readEvents(layout.events)).events.map((e) => e.type);
      return types.includes('verify.finished') && types.includes('judge.finished') ? true : undefined;
    }, 240_000);

    // The baseliner looks for the loot, as in the issue.
    await type('clear');
    await type('ls -la .git/leak; cat .git/leak/whoami 2>&1; git log --oneline -1; echo looked');
    const shown = await waitForTerminal(page, /^looked$/m);
    // What the look printed (the typed attack lines above it name masked.py themselves).
    const printed = shown.slice(shown.lastIndexOf('echo looked') + 'echo looked'.length);
    assert.match(printed, /No such file or directory/, shown);
    assert.doesNotMatch(printed, /uid=0\(root\)|task\.json|masked\.py|whoami\n|\bps\b/, shown);
    await wb.runCommand('View: Toggle Maximized Panel');
    // The notification centre beside the terminal: the window's own "submitted" message stays in view.
    await wb.runCommand('Notifications: Show Notifications');
    await page.waitForTimeout(500);
    await wb.screenshot('26-attack-after-submit');

    // Nothing of it ran on the host: the loot folder is empty.
    assert.deepEqual(fs.readdirSync(path.join(layout.workspace, '.git', 'leak')), [], 'the host ran the filter');
    // Nothing of private/ or of the pristine cache is anywhere the solver can read (the control line proves the search reaches the workspace).
    const control = 'self.w = [wi - lr * g / n for wi, g in zip(self.w, gw)]';
    const r = await asSolver(GREP_ALL, '-e', control, '-e', OUTCOME, '-e', MASKED);
    const hits = r.stdout.split('\n').filter(Boolean);
    assert.ok(hits.includes(`/workspace/toycal/model.py:${control}`), `the control line was not found:\n${r.stdout}`);
    assert.deepEqual(hits.filter((h) => !h.endsWith(`:${control}`)), [], 'the solver can read the answer');
    // The submission holds the baseliner's work, frozen in the host repository; the verifier read that commit.
    const patch = fs.readFileSync(path.join(layout.harness, 'patch.diff'), 'utf8');
    assert.match(patch, /^diff --git a\/scratch\.txt b\/scratch\.txt$/m);
    assert.match(patch, /^\+scratch$/m);
    const events = (await readEvents(layout.events)).events;
    const submitted = events.find((e) => e.type === 'submitted') as { commit?: string } | undefined;
    assert.ok(submitted?.commit);
    const latest = JSON.parse(fs.readFileSync(path.join(layout.verify, 'latest.json'), 'utf8')) as { input?: { from: string; commit?: string } };
    assert.deepEqual([latest.input?.from, latest.input?.commit], ['frozen', submitted.commit]);
  });
});
