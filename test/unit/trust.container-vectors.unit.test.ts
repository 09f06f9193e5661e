/**
 * Issue 26, the Docker pass: every vector of item 2 planted FROM INSIDE the work container by its
 * user `solver` (the issue's own attack typed as a script, plus the filter kinds, include.path,
 * core.worktree at the session's private/, alternates into the pristine cache with a forged
 * "task start" root of the unmasked tree, a nested repository with its own filter recorded as a
 * gitlink, hooks, fsmonitor, aliases, pager and diff drivers), then every host operation the
 * issue names run on that session through the real CLI (patch, session show, submit with the
 * verifier and the judge, verify in both modes, judge, report, session export, import as session,
 * curate validate) and the core (repository at step N). Nothing planted ran on the host (no
 * marker in private/, none of the issue's `.git/leak` files), nothing of private/ or of the
 * masked files reached the solver or any output, and the submitted patch holds the solver's work.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { SessionLayout } from '../../src/core/layout';
import { DEFAULT_IMAGE, ensureWorkContainer, execText, removeWorkContainer } from '../../src/core/sandbox';
import { readEvents } from '../../src/core/session/events';
import type { Step } from '../../src/core/steps/step';
import { emptyTrajectory } from '../../src/core/trajectory/types';
import { RepoAtStep } from '../../src/core/viewer/repoAtStep';
import { readManifest } from '../../src/core/workspace/manifest';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { CONTAINER_PLANT, PRIVATE_SENTINEL, SOLVER_WORK, plantPrivateSentinel } from '../fixtures/vectors';
import { cli } from './cli.helpers';

const TASK = 'sample/toycal/0';
/** A sentence of the sample's expected_outcome and a line of its masked script (as in test/e2e/proctor.e2e.test.ts). */
const OUTCOME = 'Temperature scaling reduces the test ECE from about 0.032 to about 0.012';
const MASKED = 'grid = [0.5 + 0.05 * i for i in range(91)]';

describe('issue 26: the vectors planted from inside the work container run nothing on the host (Docker, CLI)', function () {
  this.timeout(900_000);
  let docker: Docker;
  let tmp = '';
  let layout: SessionLayout;
  const sessionId = () => path.basename(layout.root);
  const env = { ...process.env, EXPBENCH_DATASETS: '' } as NodeJS.ProcessEnv;
  let cache = '';
  const outputs: string[] = [];
  const run = async (args: string[]) => {
    const r = await cli(args, { env });
    outputs.push(`$ expbench ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
    return r;
  };

  before(async function () {
    docker = await requireDocker(this);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-trust-docker-'));
    cache = path.join(tmp, 'cache');
    layout = new SessionLayout(path.join(tmp, `trust-${process.pid}`));
    const prep = await run(['prepare', TASK, '--out', layout.root, '--cache', cache]);
    assert.equal(prep.code, 0, prep.stderr);
    await plantPrivateSentinel(layout.root);
    fs.writeFileSync(layout.script, '#!/bin/bash\nset -e\ncat solver.txt nested/nested.txt\n');
    fs.writeFileSync(path.join(layout.workspace, 'solver.txt'), `${SOLVER_WORK}\n`);
  });
  after(async () => {
    if (docker && layout) {
      await removeWorkContainer(docker, sessionId());
      await assertNoContainers(docker, [sessionId()]);
    }
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('plants every vector as user solver, then patch, show, submit (verify, judge), verify both modes, judge, report, export, import, repository at step, curate validate', async () => {
    const m = await readManifest(layout.root);
    const tree = execFileSync('git', ['--git-dir', m.source.cacheRepo!, 'rev-parse', `${m.commit}^{tree}`], { encoding: 'utf8' }).trim();
    const { container } = await ensureWorkContainer(docker, { task: TASK, session: sessionId(), workspaceDir: layout.workspace, image: DEFAULT_IMAGE, limits: { network: false } });
    const planted = await execText(container, { cmd: ['bash', '-c', CONTAINER_PLANT, 'sh', path.join(m.source.cacheRepo!, 'objects'), tree] });
    assert.equal(planted.exitCode, 0, planted.stderr);
    assert.match(planted.stdout, /planted/);
    assert.equal((await execText(container, { cmd: ['id', '-un'] })).stdout.trim(), 'solver');

    const answers = path.join(tmp, 'answers.json');
    fs.writeFileSync(answers, JSON.stringify({ design: 'temperature scaling on held-out logits', conclusion: 'ECE falls.' }));
    const steps: Array<[string, string[]]> = [
      ['patch', ['patch', layout.root]],
      ['submit', ['session', 'submit', layout.root, '--answers', answers]],
      ['session show', ['session', 'show', layout.root]],
      ['verify (clean)', ['verify', layout.root]],
      ['verify (harness)', ['verify', layout.root, '--mode', 'harness']],
      ['judge', ['judge', layout.root, '--heuristic']],
      ['report', ['report', layout.root]],
      ['session export', ['session', 'export', layout.root, '--format', 'inspect-eval', '--out', path.join(tmp, 'exported.eval')]],
      ['import as session', ['session', 'import', path.join(tmp, 'exported.eval'), path.join(layout.harness, 'patch.diff'), '--task', TASK, '--out', path.join(tmp, 'imported'), '--cache', cache, '--no-judge']],
      ['curate validate', ['curate', 'validate', TASK, '--run', 'ls; true', '--out', path.join(tmp, 'validate'), '--cache', cache]],
    ];
    const failed: string[] = [];
    for (const [what, args] of steps) {
      const r = await run(args);
      if (r.code !== 0) failed.push(`${what}: exit ${r.code}: ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`);
    }
    // The repository at step N (the viewer's; no command line yet) on this workspace.
    const stepsOf = [{ index: 0, kind: 'edit', actor: 'agent', phase: 'implementation', time: { ms: 0, relMs: 0 }, source: { file: 'run.json' },
      edits: [{ path: 'step.txt', after: 'from the step\n', op: 'create' }] } as unknown as Step];
    try {
      const at = await new RepoAtStep({ trajectory: { ...emptyTrajectory('v', 'openhands-v1', path.join(tmp, 'v.json')), steps: stepsOf }, workspace: layout.workspace, cacheDir: path.join(tmp, 'repo-at-step') }).at(0);
      outputs.push(execFileSync('grep', ['-rIh', '.', at.dir, at.baseDir], { encoding: 'utf8', maxBuffer: 64 << 20 }));
    } catch (e) {
      failed.push(`repository at step: ${String(e).split('\n')[0]}`);
    }
    // Nothing planted ran on the host: no marker in private/, none of the files in .git/leak.
    const pwned = fs.readdirSync(layout.private).filter((n) => n.startsWith('pwned'));
    if (pwned.length) failed.push(`the host ran planted programs: ${[...new Set(pwned.map((n) => n.replace(/-\d+$/, '')))].join(', ')}`);
    const leaked = (await execText(container, { cmd: ['bash', '-c', 'find /workspace/.git -path "/workspace/.git/leak*" -mindepth 1 -not -path /workspace/.git/leak; true'] })).stdout.trim();
    if (leaked) failed.push(`files appeared in the solver's .git/leak: ${leaked.split('\n').slice(0, 6).join(', ')}`);
    // Nothing of private/ or of the masked files reached anything the solver reads, nor any output.
    const grep = await execText(container, { cmd: ['bash', '-c', 'LC_ALL=C grep -rFoa -D skip "$@" /workspace /home /tmp 2>/dev/null; true', 'sh', '-e', PRIVATE_SENTINEL, '-e', OUTCOME, '-e', MASKED] });
    if (grep.stdout.trim()) failed.push(`the solver can read: ${grep.stdout.trim().split('\n').slice(0, 4).join(', ')}`);
    const all = outputs.join('\n');
    for (const needle of [PRIVATE_SENTINEL, MASKED]) if (all.includes(needle)) failed.push(`an output holds ${needle}`);
    assert.deepEqual(failed, [], 'every operation ran, and nothing planted ran or leaked');

    // The submitted patch holds the solver's work (its files, the nested repository's as plain files), based on task start.
    const patch = fs.readFileSync(path.join(layout.harness, 'patch.diff'), 'utf8');
    for (const f of ['solver.txt', 'scratch.txt', 'reproduce_exp_bench.sh', 'nested/nested.txt', '.gitattributes']) assert.match(patch, new RegExp(`^diff --git a/${f.replace('.', '\\.')} `, 'm'), f);
    assert.ok(patch.includes(`${SOLVER_WORK} nested v2`));
    assert.ok(!/^diff --git a\/(?:private|task\.json)/m.test(patch));
    const submitted = (await readEvents(layout.events)).events.find((e) => e.type === 'submitted') as { commit?: string } | undefined;
    assert.ok(submitted?.commit, 'the submitted event names the frozen commit');
    const latest = JSON.parse(fs.readFileSync(path.join(layout.verify, 'latest.json'), 'utf8')) as { mode: string; E_exit: boolean; input?: { from: string; commit?: string } };
    assert.equal(latest.mode, 'harness');
    assert.deepEqual([latest.input?.from, latest.input?.commit], ['frozen', submitted.commit]);
    const log = fs.readFileSync(path.join(layout.root, (latest as unknown as { logs: { stdout: string } }).logs.stdout), 'utf8');
    assert.equal(latest.E_exit, true, `the script ran from the frozen tree: ${log.slice(-800)}`);
    assert.ok(log.includes(`${SOLVER_WORK} nested v2`), 'the nested repository\'s file is in the frozen tree');
    const imported = fs.readFileSync(path.join(tmp, 'imported', 'private', 'harness', 'patch.diff'), 'utf8');
    assert.ok(imported.includes(SOLVER_WORK), 'the imported session holds the solver\'s work');
  });
});
