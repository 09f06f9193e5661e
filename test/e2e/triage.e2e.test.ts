// Triage and compare, end to end in the real workbench (code-server in headless Chromium): two real
// sessions of the bundled sample (a person's through the session service, verified in the
// container and judged; the built-in agent's by `expbench agent run` against the scripted model
// server) under the folder's `expbench.sessionsDir`. The user opens the Trajectories view, runs
// "Triage Runs" and sorts the table, then "Compare Runs…" on the two.
// Screenshots (must-show of issue 17): docs/images/17-triage-table.png, 17-compare-human-agent.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getWorkbench } from '../harness/e2e-context';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { repoRoot, testResultsDir } from '../harness/paths';
import { until } from '../harness/until';
import type { Workbench } from '../harness/workbench';
import { makeAgentSession, makeHumanSession } from '../unit/triage.fixtures';

const IMAGES = path.join(repoRoot, 'docs', 'images');

/** Saves a must-show screenshot under docs/images. */
async function mustShow(wb: Workbench, name: string): Promise<string> {
  await wb.dismissHovers();
  const file = path.join(IMAGES, `${name}.png`);
  await wb.page.screenshot({ path: file });
  const size = fs.statSync(file).size;
  assert.ok(size > 5_000 && size < 600_000, `screenshot ${file} is ${size} bytes`);
  return file;
}

const TRAJ = path.join(repoRoot, '..', 'shared', 'data', 'trajectories');
/** Real trajectory files (../shared/data/trajectories/README.md): OpenHands v1 eval output (2 instances), a mini-swe-agent run. */
const EXTRA_FILES = [
  path.join(TRAJ, 'openhands-v1', 'OpenHands__benchmarks', 'output.jsonl'),
  path.join(TRAJ, 'mini-swe-agent', 'gruckion__mini-swe-agent', 'django__django-16255.traj.json'),
];

/** "Add Trajectory File…" with `file` typed into the file dialog (code-server's own: a path box in a quick input). */
async function addFile(wb: Workbench, file: string): Promise<void> {
  const widget = wb.page.locator('.quick-input-widget');
  await wb.page.keyboard.press('F1');
  await widget.locator('input').fill('>EXP-Bench: Add Trajectory File…');
  await widget.locator('.monaco-list-row').filter({ has: wb.page.locator('.label-name', { hasText: 'EXP-Bench: Add Trajectory File…' }) }).first().click();
  await widget.locator('.quick-input-title', { hasText: 'Add Trajectory File' }).waitFor({ state: 'visible', timeout: wb.timeoutMs });
  await wb.chooseInFileDialog(file);
}

describe('issue 17: triage table and compare (end to end)', function () {
  this.timeout(600_000);
  let tmp: string;
  let server: FakeOpenAIServer;

  before(async () => {
    tmp = path.join(testResultsDir, 'e2e-sessions', `triage-${process.pid}-${Date.now()}`);
    const sessions = path.join(tmp, 'sessions');
    fs.mkdirSync(sessions, { recursive: true });
    server = await new FakeOpenAIServer().start();
    await makeHumanSession(path.join(sessions, 'human-toycal'), path.join(tmp, 'cache'));
    await makeAgentSession(path.join(sessions, 'agent-toycal'), path.join(tmp, 'cache'), server);
    const folder = path.join(tmp, 'folder');
    fs.mkdirSync(path.join(folder, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify({ 'expbench.sessionsDir': sessions }, null, 2));
    await getWorkbench().openFolder(folder);
    await getWorkbench().trustWorkspace(); // the user's own folder: its expbench.sessionsDir applies once trusted (docs/trust.md)
  });

  after(async () => {
    await server?.close();
    const wb = getWorkbench();
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the Trajectories view lists both runs under the task; Triage Runs shows the table, sorted by a column', async () => {
    const wb = getWorkbench();
    await wb.openViewContainer('EXP-Bench');
    await wb.expandTreeItem('sample/toycal/0');
    await wb.treeItem(/^human/);
    await wb.treeItem(/^expbench-agent · scripted-agent/);
    // real agent runs of other tasks, added through the file dialog (code-server's own: a path box in a quick input)
    for (const f of EXTRA_FILES) await addFile(wb, f);
    // each added file is listed: its runs' tasks are rows of the Trajectories view
    await wb.treeItem(/^django__django-16255\b/);
    await wb.treeItem(/^openhands/);
    // files other tests of this window opened in the viewer and have deleted since: removed from the view, as a user tidies it
    const gone = wb.page.locator('.part.sidebar .monaco-list-row[role="treeitem"]').filter({ has: wb.page.locator('.label-description', { hasText: 'no such session folder or trajectory file' }) });
    // (the list is virtual: rows scrolled out of sight are not in the DOM, so each removal waits for its own row, by its label, to go)
    const t0 = Date.now();
    let removed = 0;
    for (; await gone.count() > 0; removed++) {
      const label = await gone.first().getAttribute('aria-label');
      assert.ok(label, 'a tree row has an aria-label');
      const isGone = async () => wb.page.locator('.part.sidebar .monaco-list-row[role="treeitem"]').evaluateAll((els, l) => els.every((e) => e.getAttribute('aria-label') !== l), label);
      await wb.contextMenu(gone.first(), 'Remove from Trajectories', isGone);
      await until(`"${label.split('\n')[0]}" removed from the view`, async () => (await isGone()) || undefined, wb.timeoutMs);
    }
    console.log(`      [triage] ${removed} rows of deleted files removed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await wb.runCommand('EXP-Bench: Triage Runs');
    const frame = await wb.webviewFrame('Triage: Runs');
    const table = frame.locator('#triage-table');
    await table.locator('tbody tr[data-run]').nth(3).waitFor({ state: 'visible', timeout: 60_000 });
    await frame.locator('th[data-column="tokens"]').click();
    await frame.locator('th[data-column="tokens"]').click(); // descending: the agent's run (tokens) first
    assert.equal(await frame.locator('th[data-column="tokens"]').getAttribute('aria-sort'), 'descending');
    const tokens = (await table.locator('tbody tr[data-run] td[data-column="tokens"]').allInnerTexts()).map(Number);
    assert.ok(tokens.length >= 4 && tokens.every((t, i) => i === 0 || tokens[i - 1] >= t), `tokens descending: ${tokens.join(', ')}`);
    assert.match(await table.innerText(), /expbench-agent\s+scripted-agent\s+agent/);
    const human = (await table.locator('tbody tr.flagged').first().innerText()).replace(/\s+/g, ' ');
    assert.match(human, /sample\/toycal\/0 \S+ human – human 0% 0%/, 'the person\'s run (its Run label after the task): flagged, D and I zeroed');
    await mustShow(wb, '17-triage-table');
    await frame.locator('#triage-flagged').check();
    assert.equal(await table.locator('tbody tr[data-run]').count(), 1, 'flagged only: the person\'s run');
    await frame.locator('#triage-flagged').uncheck();
  });

  it('Compare Runs… on the person\'s run and the agent\'s: scores, time per phase, verdicts and steps side by side', async () => {
    const wb = getWorkbench();
    // as runCommand does, without waiting for the palette to close: the command opens its own quick pick at once
    const widget = wb.page.locator('.quick-input-widget');
    await wb.page.keyboard.press('F1');
    await widget.locator('input').fill('>EXP-Bench: Compare Runs…');
    await widget.locator('.monaco-list-row').filter({ has: wb.page.locator('.label-name', { hasText: 'EXP-Bench: Compare Runs…' }) }).first().click();
    await widget.locator('.monaco-list-row', { hasText: /django__django-16255/ }).first().waitFor({ state: 'visible', timeout: wb.timeoutMs }); // the runs, not the palette
    const pick = async (label: RegExp) => {
      const row = widget.locator('.monaco-list-row').filter({ hasText: label }).first();
      await row.waitFor({ state: 'visible', timeout: wb.timeoutMs });
      await row.click();
    };
    await pick(/^human/);
    // the second pick lists only the other runs of the same task
    await widget.locator('.monaco-list-row', { hasText: /django__django-16255/ }).first().waitFor({ state: 'hidden', timeout: wb.timeoutMs });
    await pick(/expbench-agent · scripted-agent/);
    const frame = await wb.webviewFrame(/^Compare: sample\/toycal\/0/);
    await frame.locator('h2', { hasText: 'Steps by phase' }).waitFor({ state: 'visible', timeout: 60_000 });
    const text = (await frame.locator('body').innerText()).replace(/\s+/g, ' ');
    assert.match(text, /Time per phase design 10m 00s/);
    assert.match(text, /requirement 1:/);
    await mustShow(wb, '17-compare-human-agent');
  });
});
