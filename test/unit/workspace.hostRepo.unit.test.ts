/**
 * Sessions made before the host repository existed (issue 26): no `private/repo.git`, a manifest
 * without `taskStart`, the solver's `workspace/.git` as the only repository. On open the host
 * repository is rebuilt from the manifest's pinned commit in the pristine cache (never from the
 * workspace's `.git`, which here carries a filter that must not run), checked against the
 * manifest's `workspaceTree`; without the cache or the manifest the session is refused, naming
 * the folder and what to do. A session such a version submitted gets its frozen commit from its
 * `patch.diff`.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { SessionLayout } from '../../src/core/layout';
import { frozenSubmission } from '../../src/core/workspace/freeze';
import { openHostRepository } from '../../src/core/workspace/hostRepo';
import { readManifest } from '../../src/core/workspace/manifest';
import { makePatch } from '../../src/core/workspace/patch';
import { prepareSession } from '../../src/core/workspace/prepare';
import { buildPaperRepo, PaperFixture, tmpDir } from '../fixtures/repos/build';
import { markCommand, markers } from '../fixtures/vectors';

describe('host repository: sessions of an earlier version are rebuilt from the pristine cache, or refused', function () {
  this.timeout(180_000);
  let fx: PaperFixture;
  let root: string;
  let template: string;
  let cache: string;
  const task = { id: 'p/1/0', type: 1 as const, source: [], maskedSource: ['src/train.py'] };

  /** A copy of the template made as an earlier version left it: no private/repo.git, no taskStart. */
  async function oldSession(name: string): Promise<SessionLayout> {
    const dir = path.join(root, name);
    execFileSync('cp', ['-a', template, dir]);
    const layout = new SessionLayout(dir);
    await fsp.rm(layout.repository, { recursive: true, force: true });
    const m = JSON.parse(await fsp.readFile(layout.manifest, 'utf8'));
    delete m.taskStart;
    await fsp.writeFile(layout.manifest, JSON.stringify(m));
    return layout;
  }

  before(async () => {
    fx = await buildPaperRepo();
    root = await tmpDir('expbench-hostrepo-');
    cache = path.join(root, 'cache');
    template = path.join(root, 'template');
    await prepareSession({ task, source: fx.repo, outDir: template, cacheDir: cache });
  });
  after(async () => {
    await fsp.rm(root, { recursive: true, force: true });
    await fsp.rm(fx.root, { recursive: true, force: true });
  });

  it('migrates on open: the same task start tree, taskStart recorded, the workspace\'s .git never run', async () => {
    const layout = await oldSession('old');
    const mark = path.join(root, 'mark-old');
    await fsp.mkdir(mark);
    // The workspace's own repository carries a filter: the migration must neither run nor read it.
    execFileSync('git', ['config', 'filter.v.clean', markCommand(mark, 'migrate')], { cwd: layout.workspace });
    await fsp.writeFile(path.join(layout.workspace, '.git', 'info', 'attributes'), '* filter=v\n');
    await fsp.writeFile(path.join(layout.workspace, 'mine.txt'), 'my work\n');
    const before = await readManifest(layout.root);
    assert.equal(before.taskStart, undefined);
    const [a, b] = await Promise.all([makePatch(layout.workspace), makePatch(layout.workspace)]);
    const after = await readManifest(layout.root);
    assert.ok(after.taskStart, 'taskStart recorded');
    assert.equal(a.base, after.taskStart);
    assert.equal(b.base, after.taskStart, 'two openers at once end with one repository');
    const tree = execFileSync('git', ['--git-dir', layout.repository, 'rev-parse', `${after.taskStart}^{tree}`], { encoding: 'utf8' }).trim();
    assert.equal(tree, before.workspaceTree, 'the rebuilt task start is the recorded tree');
    assert.deepEqual(a.files.map((f) => f.path), ['mine.txt']);
    assert.deepEqual(await markers(mark), [], 'the workspace\'s filter ran');
  });

  it('refuses, naming the folder and what to do, when the pristine cache is gone or there is no manifest', async () => {
    const noCache = await oldSession('no-cache');
    const m = JSON.parse(await fsp.readFile(noCache.manifest, 'utf8'));
    m.source.cacheRepo = path.join(root, 'gone.git');
    await fsp.writeFile(noCache.manifest, JSON.stringify(m));
    await assert.rejects(makePatch(noCache.workspace), (e) => isExpBenchError(e, 'SESSION_INVALID') && e.input === noCache.root
      && /earlier version .*pristine cache repository .*gone.*prepare the task into a new folder/.test((e as Error).message));
    const noManifest = await oldSession('no-manifest');
    await fsp.rm(noManifest.manifest);
    await assert.rejects(openHostRepository(noManifest), (e) => isExpBenchError(e, 'SESSION_INVALID') && /no manifest to rebuild the task start from/.test((e as Error).message));
    assert.equal(await fsp.stat(noManifest.repository).catch(() => undefined), undefined, 'nothing was made');
  });

  it('a session an earlier version submitted: its frozen commit is made from its patch.diff (once), never from the live workspace', async () => {
    const layout = await oldSession('old-submitted');
    await fsp.mkdir(layout.harness, { recursive: true });
    await fsp.writeFile(path.join(layout.harness, 'patch.diff'), 'diff --git a/submitted.txt b/submitted.txt\nnew file mode 100644\n--- /dev/null\n+++ b/submitted.txt\n@@ -0,0 +1 @@\n+as submitted\n');
    await fsp.writeFile(layout.answers, JSON.stringify({ design: 'd', conclusion: 'c' }));
    await fsp.writeFile(path.join(layout.workspace, 'later.txt'), 'written after submit\n');
    const h = await openHostRepository(layout);
    const frozen = await frozenSubmission(h);
    assert.equal(frozen?.from, 'patch');
    const files = execFileSync('git', ['--git-dir', layout.repository, 'diff-tree', '-r', '--name-only', h.taskStart, frozen!.commit], { encoding: 'utf8' }).trim();
    assert.equal(files, 'submitted.txt');
    assert.equal((await frozenSubmission(h))?.commit, frozen!.commit, 'made once');
  });
});
