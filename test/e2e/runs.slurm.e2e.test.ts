// The run-set board on Slurm, end to end in the real workbench (code-server in headless Chromium):
// two tasks of the fixture paper worked by the built-in agent against the scripted model, placed on
// the local Slurm (scripts/setup-slurm.sh) with 2 CPUs each, so that one runs and the other waits
// for the node ("pending: Resources", Slurm's reason). The user opens the Run Sets view, clicks the
// run set and reads the board; `runs cancel` then leaves squeue without the run set's jobs.
// Screenshot (issue 28): docs/images/28-slurm-board.png.
import * as assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { foldRunSet, readRunSet, RunSetLayout, type RunSetView } from '../../src/core/runs';
import { getWorkbench } from '../harness/e2e-context';
import type { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { repoRoot, testResultsDir } from '../harness/paths';
import { buildRunSetFixture, startUnitModel } from '../harness/runSetFixture';
import { requireSlurm, squeueOf } from '../harness/slurm';

const IMAGES = path.join(repoRoot, 'docs', 'images');
const CLI = path.join(repoRoot, 'dist', 'cli.js');
const exec = promisify(execFile);

async function state(dir: string): Promise<RunSetView | undefined> {
  const r = await readRunSet(new RunSetLayout(dir).state).catch(() => undefined);
  return r ? foldRunSet(r.records) : undefined;
}

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 300_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('issue 28: the run-set board of a run set on Slurm (end to end)', function () {
  this.timeout(600_000);
  let tmp: string;
  let dir: string;
  let model: FakeOpenAIServer;
  let run: ChildProcess | undefined;
  let env: NodeJS.ProcessEnv;

  before(async function () {
    const conf = await requireSlurm(this);
    tmp = path.join(testResultsDir, 'e2e-sessions', `runs-slurm-${process.pid}-${Date.now()}`);
    fs.mkdirSync(tmp, { recursive: true });
    await buildRunSetFixture(tmp);
    // every reply held 6 s: the running unit is still running when the board is read
    model = await startUnitModel(6000);
    fs.writeFileSync(path.join(tmp, 'spec.jsonc'), `{
  // two tasks of 2 CPUs each on a node of 2: one runs, one waits for the node
  "version": 1, "name": "fixture2026/90001 on Slurm", "datasets": ["exp-bench"], "tasks": ["fixture2026/90001/0", "fixture2026/90001/1"],
  "agent": { "name": "scripted", "model": "scripted-agent", "maxSteps": 20 }, "concurrency": 2,
  "limits": { "cpus": 2, "memoryMiB": 2048 }, "placement": { "kind": "slurm", "container": "docker" }
}`);
    dir = path.join(tmp, 'run');
    env = { ...process.env, SLURM_CONF: conf, EXPBENCH_AGENT_BASE_URL: model.baseURL, XDG_CACHE_HOME: path.join(tmp, 'cache') };
    for (const k of Object.keys(env)) if (/^(OPENAI_|EXPBENCH_JUDGE_)/.test(k)) delete env[k];
    run = spawn(process.execPath, [CLI, 'runs', 'start', path.join(tmp, 'spec.jsonc'), '--out', dir], { env, stdio: ['ignore', 'ignore', fs.openSync(path.join(tmp, 'start.log'), 'w')] });
    const folder = path.join(tmp, 'folder');
    fs.mkdirSync(path.join(folder, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify({ 'expbench.runs.folders': [dir] }, null, 2));
    await until('one unit running on the node, the other pending: Resources', async () => {
      const v = await state(dir);
      return v && v.counts.running === 1 && v.units.some((u) => u.detail === 'pending: Resources') ? true : undefined;
    });
    await getWorkbench().openFolder(folder);
  });

  after(async () => {
    if (dir) await exec(process.execPath, [CLI, 'runs', 'cancel', dir], { env }).catch(() => undefined);
    if (run && run.exitCode === null) run.kill('SIGINT');
    await model?.close();
    const wb = getWorkbench();
    await wb.openFolder(wb.initialFolder);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the board shows the running unit on its node and the other "pending: Resources"; runs cancel leaves squeue without its jobs', async () => {
    const wb = getWorkbench();
    await wb.openViewContainer('EXP-Bench');
    const frame = await wb.webviewFromTreeItem(/^fixture2026\/90001 on Slurm$/, /^Run Set/);
    const table = frame.locator('#runs-table');
    await table.locator('tbody tr[data-status="pending"]').filter({ hasText: 'pending: Resources' }).first().waitFor({ state: 'visible', timeout: 60_000 });
    await table.locator('tbody tr[data-status="running"]').first().waitFor({ state: 'visible', timeout: 60_000 });
    const running = (await table.locator('tbody tr[data-status="running"]').first().innerText()).replace(/\s+/g, ' ');
    const node = (await exec('hostname', ['-s'])).stdout.trim();
    assert.match(running, new RegExp(`on ${node}`), running);
    await wb.dismissHovers();
    const file = path.join(IMAGES, '28-slurm-board.png');
    await wb.page.screenshot({ path: file });
    const size = fs.statSync(file).size;
    assert.ok(size > 5_000 && size < 900_000, `screenshot ${file} is ${size} bytes`);

    const v = (await state(dir))!;
    const c = await exec(process.execPath, [CLI, 'runs', 'cancel', dir], { env });
    assert.match(c.stdout, /^cancelled/);
    await until('runs start ended', async () => (run!.exitCode !== null ? true : undefined), 120_000);
    const left = (await squeueOf()).filter((l) => l.name.startsWith(`expbench-${v.id}-`) && /PENDING|RUNNING|COMPLETING/.test(l.state));
    assert.deepEqual(left, [], 'squeue holds none of the run set\'s jobs');
    await frame.locator('#runs-orchestrator').filter({ hasText: /^not running/ }).waitFor({ state: 'visible', timeout: 120_000 });
  });
});
