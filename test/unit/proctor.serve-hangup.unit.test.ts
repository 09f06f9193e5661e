/**
 * `expbench baseline serve` ended by SIGHUP (the organiser's terminal or SSH connection closed)
 * left the proctored work container running: everything the baseliner had started in its
 * terminal went on with no forwarder, no channel and no host watching, and the next serve of the
 * folder then walked a workspace those processes were still changing (trust.share-walk). The
 * bundled CLI, real Docker and the real code-server install.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { findWorkContainer, removeWorkContainer } from '../../src/core/sandbox';
import { assertNoContainers, requireDocker } from '../harness/docker';

const CLI = path.resolve(__dirname, '../../../dist/cli.js');

describe('baseline serve: a closed terminal (SIGHUP) stops the proctored container as Ctrl-C does', function () {
  this.timeout(300_000);
  let docker: Docker;
  let root = '';
  let session = '';

  before(async function () {
    docker = await requireDocker(this);
    if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: npm run build first`);
  });
  after(async () => {
    if (docker && session) {
      await removeWorkContainer(docker, session);
      await assertNoContainers(docker, [session]);
    }
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('SIGHUP: the serve stops its container (kept, not running) and exits', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-hangup-'));
    const out = path.join(root, 'hangup-session');
    session = path.basename(out);
    const child = spawn(process.execPath, [CLI, 'baseline', 'serve', 'sample/toycal/0', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const check = () => { if (/\?tkn=/.test(stdout)) resolve(); };
        child.stdout.on('data', check);
        void exited.then((code) => reject(new Error(`serve exited (${code}) before printing its link: ${stderr}`)));
      });
      const running = await findWorkContainer(docker, session);
      assert.equal(running?.state, 'running', 'the proctored container runs while served');
      child.kill('SIGHUP');
      const code = await exited;
      assert.notEqual(code, null, `the serve ended by itself after SIGHUP, not killed by it (stderr: ${stderr.slice(-400)})`);
      const after = await findWorkContainer(docker, session);
      assert.ok(after, 'the container is kept (a later serve reattaches)');
      assert.notEqual((await after.container.inspect()).State.Running, true, 'the container does not run on after the serve ended');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
