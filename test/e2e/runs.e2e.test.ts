// The run-set board end to end in the real workbench (code-server in headless Chromium), on a real
// run: six tasks of the fixture paper (test/harness/runSetFixture.ts) worked by the built-in agent
// against the scripted model, in containers, started with `expbench runs start` before the window
// opens its folder (whose `expbench.runs.folders` names the run set). The user opens the Run Sets
// view, clicks the run set, watches the board mid-run, opens a finished unit's session in the
// trajectory viewer, then cancels the run with the board's button.
// Screenshot (must-show of issue 27): docs/images/27-run-set-board.png.
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { foldRunSet, readRunSet, RunSetLayout, type RunSetView } from '../../src/core/runs';
import { getWorkbench } from '../harness/e2e-context';
import type { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { repoRoot, testResultsDir } from '../harness/paths';
import { buildRunSetFixture, FIXTURE_TASKS, startUnitModel } from '../harness/runSetFixture';
import type { Workbench } from '../harness/workbench';
import { until } from '../harness/until';

const IMAGES = path.join(repoRoot, 'docs', 'images');
const CLI = path.join(repoRoot, 'dist', 'cli.js');

async function state(dir: string): Promise<RunSetView | undefined> {
  const r = await readRunSet(new RunSetLayout(dir).state).catch(() => undefined);
  return r ? foldRunSet(r.records) : undefined;
}

async function mustShow(wb: Workbench, name: string): Promise<string> {
  await wb.dismissHovers();
  const file = path.join(IMAGES, `${name}.png`);
  await wb.page.screenshot({ path: file });
  const size = fs.statSync(file).size;
  assert.ok(size > 5_000 && size < 900_000, `screenshot ${file} is ${size} bytes`);
  return file;
}

describe('issue 27: the run-set board (end to end)', function () {
  this.timeout(900_000);
  let tmp: string;
  let dir: string;
  let model: FakeOpenAIServer;
  let run: ChildProcess | undefined;

  before(async () => {
    tmp = path.join(testResultsDir, 'e2e-sessions', `runs-${process.pid}-${Date.now()}`);
    fs.mkdirSync(tmp, { recursive: true });
    await buildRunSetFixture(tmp);
    // two tasks answer at once, the others slowly: the board is caught with units done, running and pending
    model = await startUnitModel((task) => (task === FIXTURE_TASKS[0] || task === FIXTURE_TASKS[1] ? 50 : 2500));
    fs.writeFileSync(path.join(tmp, 'spec.jsonc'), `{
  // six tasks of the fixture paper, the built-in agent against the scripted model
  "version": 1, "name": "fixture2026/90001 × scripted agent", "datasets": ["exp-bench"], "tasks": ["fixture2026/90001/*"],
  "agent": { "name": "scripted", "model": "scripted-agent", "maxSteps": 20 }, "concurrency": 2
}`);
    dir = path.join(tmp, 'run');
    const env: NodeJS.ProcessEnv = { ...process.env, EXPBENCH_AGENT_BASE_URL: model.baseURL, XDG_CACHE_HOME: path.join(tmp, 'cache') };
    for (const k of Object.keys(env)) if (/^(OPENAI_|EXPBENCH_JUDGE_)/.test(k)) delete env[k];
    run = spawn(process.execPath, [CLI, 'runs', 'start', path.join(tmp, 'spec.jsonc'), '--out', dir], { env, stdio: ['ignore', 'ignore', fs.openSync(path.join(tmp, 'start.log'), 'w')] });
    const folder = path.join(tmp, 'folder');
    fs.mkdirSync(path.join(folder, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify({ 'expbench.runs.folders': [dir] }, null, 2));
    await until('the run set planned', async () => ((await state(dir))?.units.length === 6 ? true : undefined));
    await getWorkbench().openFolder(folder);
  });

  after(async () => {
    if (run && run.exitCode === null) {
      run.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 200));
    }
    await model?.close();
    const wb = getWorkbench();
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the Run Sets view lists the running run set; its board shows units done, running and pending, mid-run', async () => {
    const wb = getWorkbench();
    await until('two units done and two running', async () => { const v = await state(dir); return v && v.counts.done >= 2 && v.counts.running >= 1 ? true : undefined; });
    await wb.openViewContainer('EXP-Bench');
    const frame = await wb.webviewFromTreeItem(/^fixture2026\/90001 × scripted agent$/, /^Run Set: fixture2026\/90001 × scripted agent$/);
    const table = frame.locator('#runs-table');
    await table.locator('tbody tr[data-status="done"]').nth(1).waitFor({ state: 'visible', timeout: 60_000 });
    await table.locator('tbody tr[data-status="running"]').first().waitFor({ state: 'visible', timeout: 60_000 });
    // a running unit's phase and tokens come from its session as it goes
    await frame.locator('tbody tr[data-status="running"] td:nth-child(5)').filter({ hasText: /design|implementation|execution|conclusion/ }).first().waitFor({ state: 'visible', timeout: 120_000 });
    const head = await frame.locator('#runs-orchestrator').innerText();
    assert.match(head, /^running: process \d+ \(runs start\)/);
    const done = (await table.locator('tbody tr[data-status="done"]').first().innerText()).replace(/\s+/g, ' ');
    assert.match(done, /fixture2026\/90001\/[01] scripted a1 · done 1 conclusion \d+:\d\d \/ 2:10:00 1\.1k - ✓ ✓ ✓ ·/);
    assert.ok(await table.locator('tbody tr[data-status="pending"]').count() >= 1, 'units still pending');
    assert.equal(await frame.locator('#runs-cancel').isDisabled(), false);
    assert.equal(await frame.locator('#runs-resume').isDisabled(), true, 'nothing to resume while it runs');
    await mustShow(wb, '27-run-set-board');
  });

  it('a finished unit\'s row opens its session in the trajectory viewer; Cancel stops the run, and the board says so', async () => {
    const wb = getWorkbench();
    const frame = await wb.webviewFrame(/^Run Set: /);
    await frame.locator('#runs-table tbody tr[data-status="done"]').first().click();
    await until('the viewer on the unit\'s events', async () => (/events\.jsonl/.test(await wb.activeEditorTitle()) ? true : undefined), 60_000);
    const board = await wb.webviewFromTreeItem(/^fixture2026\/90001 × scripted agent$/, /^Run Set: /);
    await board.locator('#runs-cancel').click();
    await board.locator('#runs-orchestrator').filter({ hasText: /^not running/ }).waitFor({ state: 'visible', timeout: 180_000 });
    await board.locator('#runs-table tbody tr[data-status="cancelled"]').first().waitFor({ state: 'visible', timeout: 60_000 });
    const v = (await state(dir))!;
    assert.equal(v.cancelled, true);
    assert.equal(v.counts.running, 0);
    assert.ok(v.counts.cancelled >= 1, JSON.stringify(v.counts));
    assert.equal(await board.locator('#runs-resume').isDisabled(), false, 'Resume goes on with them');
  });
});
