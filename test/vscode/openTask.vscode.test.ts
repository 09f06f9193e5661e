/**
 * "Open Task" and the container terminal in the real extension host (code-server): the command
 * prepares the bundled sample task into a chosen folder (no dialogs: `{taskId, outDir, open:false}`),
 * then "Open Container Terminal" on that session runs a shell in the real work container (real
 * Docker, image expbench/sandbox:1) where `python3 --version` runs as the non-root user in
 * /workspace; Ctrl-C reaches the TTY and the exit code is shown. Nothing is left behind.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type Docker from 'dockerode';
import { listProjectContainers, removeWorkContainer } from '../../src/core/sandbox';
import { SessionLayout } from '../../src/core/layout';
import { readManifest } from '../../src/core/workspace/manifest';
import type { ContainerTerminalHandle } from '../../src/extension/containerTerminal';
import { api } from './extensionApi';
import { requireDocker } from '../harness/docker';

const TASK = 'sample/toycal/0';

/** Polls until `pred()` holds (every 50 ms, up to `ms`), then asserts it with `what`. */
async function until(what: () => string, pred: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(pred(), what());
}

describe('Open Task and the container terminal (real extension host, real Docker)', function () {
  this.timeout(120_000);
  let root: string;
  let outDir: string;
  let docker: Docker | undefined;

  before(async () => {
    await api();
    root = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-opentask-'));
    outDir = path.join(root, 'session');
  });

  after(async function () {
    this.timeout(60_000);
    if (docker) {
      await removeWorkContainer(docker, path.basename(outDir));
      assert.deepEqual(await listProjectContainers(docker, { session: path.basename(outDir) }), [], 'no container left behind');
    }
    await fsp.rm(root, { recursive: true, force: true });
  });

  it(`"Open Task" on ${TASK} with a target folder prepares the masked, pinned workspace (no dialog)`, async () => {
    const result = await vscode.commands.executeCommand<string | undefined>('expbench.openTask', { taskId: TASK, outDir, open: false });
    assert.equal(result, outDir);
    const layout = new SessionLayout(outDir);
    const manifest = await readManifest(outDir);
    assert.equal(manifest.taskId, TASK);
    assert.match(manifest.commit, /^[0-9a-f]{40}$/);
    assert.deepEqual(manifest.masked.map((m) => m.path).sort(), ['README.md', 'experiments/temperature_scaling.py']);
    for (const m of manifest.masked) await assert.rejects(fsp.stat(path.join(layout.workspace, m.path)), /ENOENT/, m.path);
    assert.ok((await fsp.readFile(path.join(layout.workspace, 'toycal', 'metrics.py'), 'utf8')).includes('def ece('));
    const git = (...args: string[]) => execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd: layout.workspace, encoding: 'utf8' }).trim();
    assert.equal(git('log', '--all', '--format=%s'), 'task start');
    assert.equal(git('status', '--porcelain'), '');
    assert.ok(await fsp.stat(path.join(layout.workspace, '.devcontainer', 'expbench-session.json')));
    // this window did not move to the session (open:false)
    assert.notEqual(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath, layout.workspace);
  });

  it('"Open Container Terminal" runs python3 as the non-root user in /workspace; Ctrl-C and the exit code pass through', async function () {
    docker = await requireDocker(this);
    const handle = await vscode.commands.executeCommand<ContainerTerminalHandle | undefined>('expbench.openContainerTerminal', { sessionDir: outDir, focus: false });
    assert.ok(handle, 'the command returned no terminal');
    let out = '';
    const sub = handle.pty.onDidWrite((d) => { out += d; });
    try {
      assert.equal(handle.terminal.name, 'EXP-Bench: task container');
      await until(() => `the shell did not start (state ${handle.pty.state}): ${out}`, () => handle.pty.state === 'running', 60_000);

      handle.terminal.sendText('python3 --version; echo "uid=$(id -u) cwd=$PWD"');
      await until(() => `no python3 version in ${JSON.stringify(out)}`, () => /Python 3\.\d+\.\d+/.test(out) && /uid=\d+ cwd=\S+/.test(out));
      const [, uid, cwd] = /uid=(\d+) cwd=(\S+)/.exec(out)!;
      assert.notEqual(uid, '0', 'the shell does not run as root');
      assert.equal(cwd, '/workspace');

      handle.terminal.sendText('sleep 30; echo "after=$?"');
      await new Promise((r) => setTimeout(r, 500));
      handle.terminal.sendText('\x03', false);
      handle.terminal.sendText('echo "status=$?"');
      await until(() => `Ctrl-C did not interrupt sleep: ${JSON.stringify(out.slice(-400))}`, () => /status=130/.test(out), 10_000);
      assert.doesNotMatch(out, /after=0/);

      handle.terminal.sendText('exit 5');
      await until(() => `no exit code shown: ${JSON.stringify(out.slice(-400))}`, () => handle.pty.state === 'exited', 10_000);
      assert.equal(handle.pty.lastExitCode, 5);
      assert.match(out, /exited with code 5/);
    } finally {
      sub.dispose();
      handle.terminal.dispose();
      await handle.manager.remove();
    }
    assert.deepEqual(await listProjectContainers(docker, { session: path.basename(outDir) }), []);
  });
});
