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

  /** Starts `baseline serve` of the sample task into a new folder; its output is collected. */
  function startServe(name: string) {
    root ||= fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-hangup-'));
    const out = path.join(root, name);
    session = path.basename(out);
    const child = spawn(process.execPath, [CLI, 'baseline', 'serve', 'sample/toycal/0', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    const o = { child, stdout: '', stderr: '', exited: new Promise<number | null>((r) => child.once('exit', (code) => r(code))) };
    child.stdout.on('data', (c: Buffer) => { o.stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { o.stderr += c.toString(); });
    return o;
  }

  /** Resolves once `pattern` is in the serve's stdout or stderr; rejects when it exits first. */
  function printed(o: ReturnType<typeof startServe>, pattern: RegExp): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const check = () => { if (pattern.test(o.stdout) || pattern.test(o.stderr)) resolve(); };
      o.child.stdout.on('data', check);
      o.child.stderr.on('data', check);
      void o.exited.then((code) => reject(new Error(`serve exited (${code}) before printing ${pattern}: ${o.stderr}`)));
    });
  }

  it('SIGHUP: the serve stops its container (kept, not running) and exits', async () => {
    const o = startServe('hangup-session');
    try {
      await printed(o, /\?tkn=/);
      const running = await findWorkContainer(docker, session);
      assert.equal(running?.state, 'running', 'the proctored container runs while served');
      o.child.kill('SIGHUP');
      const code = await o.exited;
      assert.notEqual(code, null, `the serve ended by itself after SIGHUP, not killed by it (stderr: ${o.stderr.slice(-400)})`);
      const after = await findWorkContainer(docker, session);
      assert.ok(after, 'the container is kept (a later serve reattaches)');
      assert.notEqual((await after.container.inspect()).State.Running, true, 'the container does not run on after the serve ended');
    } finally {
      if (o.child.exitCode === null) o.child.kill('SIGKILL');
    }
  });

  // The stop handlers were installed only after the link was printed: a SIGHUP during the start-up
  // (or in the instant after the link) had node's default, and the container started on, unwatched.
  it('SIGHUP during the start-up (the container starting): the serve ends by itself, says the window was not served, no container runs on', async () => {
    await removeWorkContainer(docker, session);
    const o = startServe('hangup-startup-session');
    try {
      await printed(o, /starting the proctored work container/);
      o.child.kill('SIGHUP');
      const code = await o.exited;
      assert.equal(code, 1, `exit 1, not killed by the signal (stderr: ${o.stderr.slice(-400)})`);
      assert.match(o.stderr, /stopped during the start-up: the window was not served/);
      assert.doesNotMatch(o.stdout, /\?tkn=/, 'no link printed');
      const after = await findWorkContainer(docker, session);
      if (after) assert.notEqual((await after.container.inspect()).State.Running, true, 'the container does not run on after the serve ended');
    } finally {
      if (o.child.exitCode === null) o.child.kill('SIGKILL');
    }
  });
});
