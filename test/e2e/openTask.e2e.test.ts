// A user opens a prepared session of the sample task in the real workbench (code-server in headless
// Chromium), accepts the offer to open the container terminal, types `python3 --version` into
// "EXP-Bench: task container" and reads Python's answer from the real work container (real
// Docker, image expbench/sandbox:1). Screenshot: open-task-terminal.png.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connectDocker } from '../../src/core/sandbox/connection';
import { listProjectContainers, removeWorkContainer } from '../../src/core/sandbox';
import { SessionLayout } from '../../src/core/layout';
import { requireDocker } from '../harness/docker';
import { getWorkbench } from '../harness/e2e-context';
import { repoRoot, testResultsDir } from '../harness/paths';
import type { Workbench } from '../harness/workbench';

const TASK = 'sample/toycal/0';

/** Text of the terminal's visible rows (xterm's DOM renderer: terminal.integrated.gpuAcceleration off in the harness). */
async function terminalText(wb: Workbench): Promise<string> {
  return wb.page.evaluate(() => {
    const rows = Array.from(document.querySelectorAll('.part.panel .xterm-rows > div'));
    return rows.map((r) => (r.textContent ?? '').replace(/\u00a0/g, ' ')).join('\n');
  });
}

async function waitForTerminalText(wb: Workbench, re: RegExp, ms = 60_000): Promise<string> {
  const deadline = Date.now() + ms;
  let text = '';
  while (Date.now() < deadline) {
    text = await terminalText(wb);
    if (re.test(text)) return text;
    await wb.page.waitForTimeout(200);
  }
  throw new Error(`the terminal never showed ${re} within ${ms} ms; it shows:\n${text}`);
}

describe('Open Task: the container terminal (end to end)', function () {
  let wb: Workbench;
  let layout: SessionLayout | undefined;

  before(async function () {
    await requireDocker(this);
    wb = getWorkbench();
    const root = path.join(testResultsDir, 'e2e-sessions', `open-task-${process.pid}-${Date.now()}`);
    fs.mkdirSync(path.dirname(root), { recursive: true });
    execFileSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'prepare', TASK, '--out', root], { stdio: 'pipe', timeout: 60_000 });
    layout = new SessionLayout(root);
  });

  after(async function () {
    this.timeout(60_000);
    await wb?.openFolder(wb.initialFolder);
    if (layout) {
      const docker = connectDocker();
      const session = path.basename(layout.root);
      await removeWorkContainer(docker, session);
      assert.deepEqual(await listProjectContainers(docker, { session }), [], 'no container left behind');
      fs.rmSync(layout.root, { recursive: true, force: true });
    }
  });

  it('opens the session, offers the terminal, and runs python3 --version in the task container', async function () {
    this.timeout(180_000);
    await wb.openFolder(layout!.workspace);
    // The session window offers the terminal (setting expbench.container.terminalOnStart = offer).
    const toast = wb.page.locator('.notification-toast').filter({ hasText: 'runs in a container' });
    await toast.waitFor({ state: 'visible', timeout: 60_000 });
    await toast.locator('.monaco-button', { hasText: 'Open Container Terminal' }).click();

    const tab = wb.page.locator('.part.panel').getByText('EXP-Bench: task container').first();
    await tab.waitFor({ state: 'visible', timeout: wb.timeoutMs });
    await waitForTerminalText(wb, /solver@task:\/workspace\$/);
    await wb.page.locator('.part.panel .xterm').first().click();
    await wb.page.keyboard.type('python3 --version');
    await wb.page.keyboard.press('Enter');
    const text = await waitForTerminalText(wb, /Python 3\.\d+\.\d+/);
    assert.match(text, /\$ python3 --version\s*\n\s*Python 3\.\d+\.\d+/);
    const file = await wb.screenshot('open-task-terminal');
    assert.ok(fs.statSync(file).size > 10_000, `screenshot ${file} is suspiciously small`);
  });
});
