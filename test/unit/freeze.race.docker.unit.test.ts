/**
 * The race of a live work tree (Docker): while the host walks the workspace (the snapshot that
 * the frozen submission, the verifier's clean tree and the judge read; the live patch the solver
 * and the judge read), a process of the work container, as user `solver`, swaps folders of the
 * workspace with links to the session's `private/` in a tight loop (`renameat2(RENAME_EXCHANGE)`,
 * the host path read from /proc/self/mountinfo, as the issue's attack does):
 * - `d/`, holding a decoy `task.json` of the size of `private/task.json`: a swap between git's
 *   `lstat("d/task.json")` and its `open` would hash the host's file (a link in the path's middle);
 * - `n/`, a nested repository: a swap between the outer `ls-files` (which names `n/` a nested
 *   repository) and the inner git started with `n` as its work tree would take `private/` whole.
 * The host snapshots, patches and finally freezes many times; no tree, patch or frozen commit may
 * ever hold `private/task.json`'s content. The walks pause the container (sandbox/pause.ts), so the
 * loop stands still while git reads; the test also checks that the loop did run between walks.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { DEFAULT_IMAGE, ensureWorkContainer, execText, pauseHolders, removeWorkContainer } from '../../src/core/sandbox';
import { SUBMITTED_REF } from '../../src/core/workspace/build';
import { freezeSubmission } from '../../src/core/workspace/freeze';
import { openHostRepository } from '../../src/core/workspace/hostRepo';
import { makePatch } from '../../src/core/workspace/patch';
import { snapshotWorkTree } from '../../src/core/workspace/snapshot';
import type { SessionLayout } from '../../src/core/layout';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { makeSessionFolder } from './session-fixtures';

const SENTINEL = `GROUND-TRUTH-${process.pid}-e41b`;
/** Rounds of walks; each round: a snapshot, a live patch. */
const ROUNDS = Number(process.env.EXPBENCH_RACE_ROUNDS ?? 150);

/** The solver's loop: swaps d ⇄ d.swap and n ⇄ n.swap (links to the host's private/) until /workspace/.stop; prints its swap count. */
const RACE = String.raw`
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
host = [l.split()[3] for l in open('/proc/self/mountinfo') if l.split()[4] == '/workspace'][0]
priv = os.path.join(os.path.dirname(host), 'private')
os.chdir('/workspace')
size = int(sys.argv[1])
os.makedirs('d', exist_ok=True)
open('d/task.json', 'w').write('x' * size)
os.symlink(priv, 'd.swap')
os.system('git init -q n && echo nested > n/task.json')
os.symlink(priv, 'n.swap')
print('host', host, flush=True)
n = 0
while not os.path.exists('/workspace/.stop'):
    libc.renameat2(-100, b'd', -100, b'd.swap', 2)
    libc.renameat2(-100, b'n', -100, b'n.swap', 2)
    n += 1
print('swaps', n, flush=True)
`;

describe('the frozen submission and the live patch under a swapping solver (Docker): the work container is paused while the host walks', function () {
  this.timeout(900_000);
  let docker: Docker;
  let layout: SessionLayout;
  const session = () => path.basename(layout.root);

  before(async function () {
    docker = await requireDocker(this);
    layout = await makeSessionFolder();
    fs.writeFileSync(path.join(layout.private, 'task.json'), JSON.stringify({ expected_outcome: SENTINEL }));
    fs.writeFileSync(path.join(layout.workspace, 'solver.txt'), 'the solver\'s work\n');
  });
  after(async () => {
    if (docker && layout) {
      await removeWorkContainer(docker, session());
      await assertNoContainers(docker, [session()]);
      fs.rmSync(layout.root, { recursive: true, force: true });
    }
  });

  it('no snapshot, live patch or frozen commit ever holds private/task.json, and the container runs again after every walk', async () => {
    const { container } = await ensureWorkContainer(docker, { task: 'race/t/0', session: session(), workspaceDir: layout.workspace, image: DEFAULT_IMAGE, limits: { network: false } });
    fs.writeFileSync(path.join(layout.workspace, 'race.py'), RACE);
    const size = fs.statSync(path.join(layout.private, 'task.json')).size;
    const loop = execText(container, { cmd: ['python3', '/workspace/race.py', String(size)] });
    // the loop has set up its folders (a nested repository at n or n.swap)
    while (!fs.existsSync(path.join(layout.workspace, 'n.swap'))) await new Promise((r) => setTimeout(r, 20));
    const h = await openHostRepository(layout);
    const gitIn = (...args: string[]) => execFileSync('git', ['--git-dir', h.gitDir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const holds = (tree: string) => { try { return gitIn('grep', '-lF', SENTINEL, tree).trim(); } catch { return ''; } };
    const leaks: string[] = [];
    const failures: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      try {
        const snap = await snapshotWorkTree(h);
        const hit = holds(snap.tree);
        if (hit) leaks.push(`snapshot ${i}: ${hit.split('\n').join(', ')}`);
      } catch (e) { failures.push(`snapshot ${i}: ${String(e).split('\n')[0]}`); }
      try {
        const p = await makePatch(layout.workspace);
        if (p.patch.includes(SENTINEL) || [...p.files.map((f) => f.path), ...p.ignoredFiles].some((f) => /(^|\/)(repo\.git|manifest\.json|state\.json)/.test(f))) {
          leaks.push(`live patch ${i}: ${p.files.map((f) => f.path).join(', ')}`);
        }
      } catch (e) { failures.push(`patch ${i}: ${String(e).split('\n')[0]}`); }
      assert.equal(pauseHolders(container.id), 0, 'no pause is held between walks');
    }
    // the freeze of Submit, under the same loop (a walk that the race made fail is tried again, up to 20 times)
    let frozen: Awaited<ReturnType<typeof freezeSubmission>> | undefined;
    for (let k = 0; k < 20 && !frozen; k++) {
      frozen = await freezeSubmission(h).catch((e: unknown) => { failures.push(`freeze ${k}: ${String(e).split('\n')[0]}`); return undefined; });
    }
    assert.ok(frozen, `the submission froze: ${failures.slice(-2).join('; ')}`);
    const frozenHit = holds(frozen.commit);
    if (frozenHit) leaks.push(`frozen commit ${SUBMITTED_REF}: ${frozenHit}`);
    fs.writeFileSync(path.join(layout.workspace, '.stop'), '');
    const r = await loop;
    const swaps = Number(/swaps (\d+)/.exec(r.stdout)?.[1] ?? 0);
    console.log(`      ${ROUNDS} rounds; the solver's loop swapped ${swaps} times; ${failures.length} walks failed (${failures.slice(0, 3).join('; ')}); leaks: ${leaks.length} (${leaks.slice(0, 5).join('; ')})`);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.ok(r.stdout.includes(`host ${fs.realpathSync(layout.workspace)}`) || r.stdout.includes(`host ${layout.workspace}`), `the loop found the host path in mountinfo: ${r.stdout}`);
    assert.ok(swaps > ROUNDS * 10, `the loop ran between the walks (${swaps} swaps)`);
    assert.deepEqual(leaks, [], 'nothing of private/ in any snapshot, patch or the frozen commit');
    // paused, the work tree stands still while git reads it: no walk fails on a path swapped under it
    assert.deepEqual(failures, [], 'every walk succeeded');
    assert.equal((await container.inspect()).State.Paused, false, 'the container runs again');
    // the solver's work is in the frozen commit
    assert.match(gitIn('ls-tree', '-r', '--name-only', frozen.commit), /^solver\.txt$/m);
  });
});
