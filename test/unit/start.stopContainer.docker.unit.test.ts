import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { DEFAULT_IMAGE, ensureWorkContainer, removeWorkContainer } from '../../src/core/sandbox';
import { requireDocker } from '../harness/docker';
import { ROOT } from './cli.helpers';

const SCRIPT = path.join(ROOT, 'scripts', 'stop-work-container.sh');
const run = (...args: string[]) => new Promise<{ code: number; out: string }>((resolve) => execFile('bash', [SCRIPT, ...args], (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr })));

/** scripts/stop-work-container.sh, which scripts/start.sh runs on exit (Ctrl-C): the session's work container stopped, kept, and no other touched. */
describe('start.sh on exit: the session\'s work container stopped, its files kept (real Docker)', function () {
  this.timeout(180_000);
  let docker: Docker;
  let tmp: string;
  const sessions = [`start-stop-a-${process.pid}`, `start-stop-b-${process.pid}`];

  before(async function () {
    docker = await requireDocker(this);
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-start-stop-'));
  });
  after(async () => {
    if (docker) for (const s of sessions) await removeWorkContainer(docker, s).catch(() => undefined);
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('stops the container of SESSION (docker stop: it exists after, with the file written in it), leaves another session\'s running; nothing to do is exit 0', async () => {
    const ids: string[] = [];
    for (const s of sessions) {
      const ws = path.join(tmp, s, 'workspace');
      await fsp.mkdir(ws, { recursive: true });
      const { container, id } = await ensureWorkContainer(docker, { task: 'sample/toycal/0', session: s, workspaceDir: ws, image: DEFAULT_IMAGE, limits: { network: false } });
      ids.push(id);
      // a file in the container's own layer (not the mounted workspace): kept only if the container is
      const exec = await container.exec({ Cmd: ['sh', '-c', 'echo kept > /tmp/work-in-container'], AttachStdout: true, AttachStderr: true });
      const stream = await exec.start({});
      await new Promise((r) => { stream.on('end', r); stream.resume(); });
    }
    const r = await run(path.join(tmp, sessions[0]));
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /stopping the work container/);
    const a = await docker.getContainer(ids[0]).inspect();
    const b = await docker.getContainer(ids[1]).inspect();
    assert.equal(a.State.Running, false, 'the session\'s container is stopped');
    assert.equal(b.State.Running, true, 'another session\'s container is left running');
    // started again, the file written before is there: the container was stopped, not removed
    await docker.getContainer(ids[0]).start();
    const exec = await docker.getContainer(ids[0]).exec({ Cmd: ['cat', '/tmp/work-in-container'], AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({});
    const chunks: Buffer[] = [];
    await new Promise((res) => { stream.on('data', (c: Buffer) => chunks.push(c)); stream.on('end', res); });
    assert.match(Buffer.concat(chunks).toString('utf8'), /kept/);
    const none = await run(path.join(tmp, 'no-such-session'));
    assert.deepEqual([none.code, none.out], [0, '']);
  });
});
