import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AI_OFF_SETTINGS, aiOff } from '../../src/core/channel/aiSettings';
import type { SolverState } from '../../src/core/channel/protocol';
import { PhasesViewSchema } from '../../src/protocol/messages';
import { phasesView } from '../../src/solver/view';

const ROOT = path.resolve(__dirname, '../../..');
const SOLVER = path.join(ROOT, 'dist', 'solver');
const SAMPLE_TASK = path.join(ROOT, 'samples', 'exp-bench', 'tasks', 'sample', 'toycal', 'toycal_complete_final.json');
const SOLUTION = path.join(ROOT, 'samples', 'solutions', 'toy-calibration');

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...await filesUnder(p));
    else out.push(p);
  }
  return out;
}

/**
 * What must never reach a baseliner (issue 13): each sentence of the sample's `expected_outcome`
 * (longer than 20 characters), distinctive lines of its masked script (experiments/temperature_scaling.py,
 * the code lines of 25+ characters), and the solution's conclusion.
 */
async function secrets(): Promise<string[]> {
  const task = JSON.parse(await fsp.readFile(SAMPLE_TASK, 'utf8')).questions[0];
  const outcome = (task.expected_outcome as string).split(/(?<=\.)\s+/).map((s) => s.trim()).filter((s) => s.length > 20);
  const script = (await fsp.readFile(path.join(SOLUTION, 'temperature_scaling.py'), 'utf8')).split('\n')
    .map((l) => l.trim()).filter((l) => l.length >= 25 && !l.startsWith('#') && !l.startsWith('import') && !l.startsWith('from'));
  const conclusion = JSON.parse(await fsp.readFile(path.join(SOLUTION, 'answers.json'), 'utf8')).conclusion as string;
  assert.ok(outcome.length >= 2 && script.length >= 5, 'the sample gives enough text to look for');
  return [...outcome, ...script, conclusion.slice(0, 80)];
}

/** The two builds are separate (docs/proctored.md): the solver bundle holds nothing of the answer, the vsix no solution. */
describe('solver build and vsix contents (issue 13)', function () {
  this.timeout(120_000);
  before(function () {
    if (!existsSync(path.join(SOLVER, 'extension.js'))) execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
  });

  it('dist/solver/** has no dockerode, no openai, no sample ground truth or solution, no reference to private/', async () => {
    const files = await filesUnder(SOLVER);
    assert.deepEqual(files.map((f) => path.relative(SOLVER, f)).sort(), ['extension.js', 'package.json', 'webview/main.css', 'webview/main.js'],
      'exactly the unpacked extension: no source maps, no samples');
    const look = await secrets();
    for (const f of files) {
      const text = await fsp.readFile(f, 'utf8');
      const rel = path.relative(ROOT, f);
      for (const bad of ['dockerode', 'docker.sock', 'openai', 'private/', 'expected_outcome', 'samples/', 'toycal_complete_final']) {
        assert.ok(!text.includes(bad), `${rel} mentions ${bad}`);
      }
      for (const s of look) assert.ok(!text.includes(s), `${rel} holds sample text: ${s}`);
    }
  });

  it('the solver manifest: its own id, the channel-only commands, AI off by configurationDefaults (= AI_OFF_SETTINGS)', async () => {
    const m = JSON.parse(await fsp.readFile(path.join(SOLVER, 'package.json'), 'utf8'));
    const root = JSON.parse(await fsp.readFile(path.join(ROOT, 'package.json'), 'utf8'));
    assert.equal(`${m.publisher}.${m.name}`, 'expbench.expbench-solver');
    assert.equal(m.version, root.version);
    assert.equal(m.main, './extension.js');
    assert.deepEqual(m.contributes.configurationDefaults, AI_OFF_SETTINGS);
    assert.ok(m.contributes.commands.every((c: { command: string }) => c.command.startsWith('expbench.solver.')));
    assert.equal(m.contributes.views, undefined, 'no task tree');
    assert.deepEqual(aiOff({ ...AI_OFF_SETTINGS }), { off: true, on: [] });
    assert.deepEqual(aiOff({ 'editor.inlineSuggest.enabled': true }, 2), { off: false, on: ['editor.inlineSuggest.enabled', 'language models available: 2'] });
  });

  it('the solver stepper view: valid for the shared webview, no runs, claims or results, and says when the host is away', () => {
    const s: SolverState = {
      phase: 'execution', finished: null, clock: { status: 'running', workingMs: 60_000, budgetMs: null },
      design: { constants: [], independent: [], dependent: [], freeText: '' }, conclusion: '', notes: [], attested: { baseliner: 'b', at: '2026-12-01T10:00:00.000Z' }, aiAllowed: false, runs: [],
    };
    const away = phasesView(s, { connected: false, queued: 3, lastError: 'ECONNREFUSED' }, 10_000, 5_000);
    assert.ok(PhasesViewSchema.safeParse(away).success);
    assert.equal(away.clock.workingMs, 65_000, 'a running clock moves on between host answers');
    assert.equal(away.clock.text, '0:01:05');
    assert.equal(away.container.state, 'unavailable');
    assert.match(away.container.message!, /host side is not running \(ECONNREFUSED\): 3 change\(s\) queued/);
    assert.deepEqual([away.runs, away.claims, away.results, away.patch], [[], [], [], null]);
    assert.equal(phasesView({ ...s, clock: { ...s.clock, status: 'paused' } }, { connected: true, queued: 0 }, 10_000, 5_000).clock.workingMs, 60_000);
    // The host's runs (reproduce_exp_bench.sh run through the channel) are listed; `running` while one goes on.
    const run = { id: 'run-1', startedAt: '2026-12-01T10:01:00.000Z', exitCode: 1, durationMs: 1500 };
    const withRun = phasesView({ ...s, runs: [run] }, { connected: true, queued: 0 }, 10_000, 5_000, true);
    assert.ok(PhasesViewSchema.safeParse(withRun).success);
    assert.deepEqual([withRun.runs, withRun.running], [[run], true]);
  });

  it('the vsix (vsce listFiles on the real .vscodeignore) holds the solver build and no solution; only the researcher sample holds the task', async () => {
    // vsce walks the whole folder (node_modules, caches: ~30 s here), so it lists a copy of what could ship.
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-vsix-'));
    try {
      for (const p of ['dist', 'media', 'samples', 'sandbox', 'package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', '.vscodeignore']) {
        if (existsSync(path.join(ROOT, p))) await fsp.cp(path.join(ROOT, p), path.join(tmp, p), { recursive: true });
      }
      const vsce = require('@vscode/vsce') as { PackageManager: { None: number }; listFiles(o: { cwd: string; packageManager: number }): Promise<string[]> };
      const listed = await vsce.listFiles({ cwd: tmp, packageManager: vsce.PackageManager.None }); // = `vsce ls --no-dependencies`
      assert.ok(listed.includes('dist/workbench.js') && listed.includes('samples/exp-bench/tasks/sample/toycal/toycal_complete_final.json'), listed.join(', '));
      // "Start Proctored Baseline…" of the researcher window copies dist/solver into each session: it ships, whole.
      const solverFiles = (await filesUnder(SOLVER)).map((f) => path.relative(ROOT, f).split(path.sep).join('/')).sort();
      assert.deepEqual(listed.filter((f) => f.startsWith('dist/solver/')).sort(), solverFiles);
      assert.deepEqual(listed.filter((f) => f.startsWith('samples/solutions/') || f.endsWith('.map')), []);
      const look = await secrets();
      let checked = 0;
      // The researcher-mode sample (the task file, and the paper's repository that prepare masks) is the only place they may be.
      for (const f of listed.filter((f) => !f.startsWith('samples/exp-bench/') && !f.startsWith('samples/repos/'))) {
        const text = await fsp.readFile(path.join(tmp, f), 'utf8');
        for (const s of look) assert.ok(!text.includes(s), `${f} in the vsix holds sample text: ${s}`);
        checked++;
      }
      assert.ok(checked >= solverFiles.length + 4, `the text check read ${checked} files, the solver build's among them`);
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  });
});
