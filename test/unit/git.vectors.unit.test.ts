/**
 * The vector × operation matrix of issue 26 (item 2), on the git layer's users in the core: each
 * vector a solver can plant in its workspace (test/fixtures/vectors.ts) against each host
 * operation that reads a workspace: the patch, the folder check, the verifier's clean tree, the
 * repository at step N, the workspace watcher and recorder, and the submission. For every pair:
 * no planted program ran on the host (no marker), nothing of `private/` or of the masked files
 * reached what the operation returned, and the patch still holds the solver's own work, based on
 * the recorded task start.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { SessionLayout } from '../../src/core/layout';
import { readManifest } from '../../src/core/workspace/manifest';
import { makePatch } from '../../src/core/workspace/patch';
import { prepareSession } from '../../src/core/workspace/prepare';
import { inspectSessionFolder } from '../../src/core/workspace/folder';
import { buildVerifyTree } from '../../src/core/verify/tree';
import { RepoAtStep } from '../../src/core/viewer/repoAtStep';
import { emptyTrajectory } from '../../src/core/trajectory/types';
import type { Step } from '../../src/core/steps/step';
import { Session } from '../../src/core/session/session';
import { WorkspaceRecorder } from '../../src/core/session/recorder';
import { WorkspaceWatcher } from '../../src/core/session/watcher';
import { submit } from '../../src/core/session/submit';
import { buildPaperRepo, PaperFixture, SECRET, tmpDir } from '../fixtures/repos/build';
import {
  ATTACK_VECTORS, markers, plantPrivateSentinel, plantVector, PRIVATE_SENTINEL, REGRESSION_VECTORS, SOLVER_WORK, VECTORS, writeSolverWork, type Vector,
} from '../fixtures/vectors';

/** Every file under `dir` (no `.git`), as one text: what a container or a viewer would get. */
async function treeText(dir: string): Promise<string> {
  const out: string[] = [];
  for (const e of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    const abs = path.join(e.parentPath, e.name);
    if (!e.isFile() || abs.split(path.sep).includes('.git')) continue;
    out.push(`${path.relative(dir, abs)}\n${await fsp.readFile(abs, 'utf8')}`);
  }
  return out.join('\n');
}

function noLeak(what: string, text: string): void {
  assert.ok(!text.includes(PRIVATE_SENTINEL), `${what}: holds content of private/`);
  assert.ok(!text.includes(SECRET), `${what}: holds content of a masked file`);
}

describe('git vectors × host operations (issue 26): nothing planted in a workspace runs or leaks', function () {
  this.timeout(300_000);
  let fx: PaperFixture;
  let root: string;
  let template: string;
  let cache: string;
  let pristine: { repo: string; commit: string };

  before(async () => {
    fx = await buildPaperRepo();
    root = await tmpDir('expbench-vectors-');
    cache = path.join(root, 'cache');
    template = path.join(root, 'template');
    await prepareSession({
      task: { id: 'p/1/0', type: 1, source: [], maskedSource: ['src/train.py', 'src/secret_dir', 'lib/helper/secret_helper.py'] },
      source: fx.repo, outDir: template, cacheDir: cache,
    });
    await plantPrivateSentinel(template);
    const m = await readManifest(template);
    pristine = { repo: m.source.cacheRepo!, commit: m.commit };
  });
  after(async () => {
    await fsp.rm(root, { recursive: true, force: true });
    await fsp.rm(fx.root, { recursive: true, force: true });
  });

  it('lists each vector of the issue once (attacks and regressions)', () => {
    assert.deepEqual([...VECTORS].sort(), [...new Set([...ATTACK_VECTORS, ...REGRESSION_VECTORS])].sort());
  });

  for (const vector of VECTORS) {
    it(`${vector}: patch, folder check, verify tree, repository at step, watcher and recorder, submit`, async () => {
      const session = path.join(root, vector);
      const mark = path.join(root, `mark-${vector}`);
      execFileSync('cp', ['-a', template, session]);
      const layout = new SessionLayout(session);
      const manifest = await readManifest(session) as Awaited<ReturnType<typeof readManifest>> & { taskStart?: string };
      const taskStart = manifest.taskStart ?? manifest.workspaceCommit;
      await writeSolverWork(layout.workspace);
      await plantVector(vector as Vector, session, mark, pristine);
      // Every operation runs whatever the others did; the failures are reported together (the matrix's row).
      const problems: string[] = [];
      let seen = 0;
      const step = async (op: string, fn: () => Promise<void>) => {
        try { await fn(); } catch (e) { problems.push(`${op}: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`); }
        const m = await markers(mark);
        if (m.length > seen) problems.push(`${op}: the host ran a planted program ${m.length - seen} time(s) (${[...new Set(m.slice(seen).map((x) => x.replace(/-\d+$/, '')))].join(', ')})`);
        seen = m.length;
      };

      await step('patch', async () => {
        const p = await makePatch(layout.workspace);
        noLeak('patch', p.patch + JSON.stringify(p.files) + JSON.stringify(p.leftOut));
        assert.equal(p.base, taskStart, 'the patch base is the recorded task start');
        assert.ok(p.patch.includes(SOLVER_WORK), 'the patch holds the solver\'s work');
        assert.ok(!p.files.some((f) => f.path.startsWith('private/') || f.path.includes('task.json')), 'no file of private/ in the patch');
        if (vector === 'nested-repository') {
          assert.ok(p.patch.includes(`${SOLVER_WORK} nested v2`), 'the nested repository\'s file, as the work tree has it, is plain content of the patch');
          assert.deepEqual(p.nestedRepositories, ['nested/']);
        }
      });
      await step('folder check', async () => {
        const r = await inspectSessionFolder(session);
        noLeak('folder check', JSON.stringify(r));
        assert.equal(r.state, 'worked');
      });
      await step('verify tree', async () => {
        const dest = await tmpDir('expbench-vectors-tree-');
        try {
          await buildVerifyTree(layout.workspace, dest);
          const text = await treeText(dest);
          noLeak('verify tree', text);
          assert.ok(text.includes(SOLVER_WORK), 'the clean tree holds the solver\'s work');
        } finally {
          await fsp.rm(dest, { recursive: true, force: true });
        }
      });
      await step('repository at step', async () => {
        const steps = [{ index: 0, kind: 'edit', actor: 'agent', phase: 'implementation', time: { ms: 0, relMs: 0 }, source: { file: 'run.json' },
          edits: [{ path: 'step.txt', after: 'from the step\n', op: 'create' }] } as unknown as Step];
        const r = new RepoAtStep({ trajectory: { ...emptyTrajectory('v', 'openhands-v1', path.join(root, `${vector}.json`)), steps }, workspace: layout.workspace, cacheDir: path.join(root, `rs-${vector}`) });
        const t = await r.at(0);
        noLeak('repository at step', await treeText(t.dir) + await treeText(t.baseDir));
        assert.equal(t.baseCommit, taskStart);
      });
      await step('watcher and recorder', async () => {
        const s = await Session.open(layout, { client: 'test', resumeClock: false });
        try {
          const recorder = new WorkspaceRecorder(s);
          const w = await WorkspaceWatcher.start(layout.workspace, recorder, { debounceMs: 20 });
          await recorder.recordSave(path.join(layout.workspace, 'README.md'), 'edited\n');
          await fsp.writeFile(path.join(layout.workspace, 'watched.txt'), 'w\n');
          await new Promise((r) => setTimeout(r, 200));
          await w.dispose();
          await recorder.settled();
        } finally {
          await s.close();
        }
        noLeak('events', await fsp.readFile(layout.events, 'utf8'));
      });
      await step('submit', async () => {
        await submit(layout, { design: 'd', conclusion: 'c' });
        const frozen = await fsp.readFile(path.join(layout.harness, 'patch.diff'), 'utf8');
        noLeak('submitted patch', frozen);
        assert.ok(frozen.includes(SOLVER_WORK), 'the submitted patch holds the solver\'s work');
      });
      assert.deepEqual(problems, [], `${vector}:\n  ${problems.join('\n  ')}`);
    });
  }
});
