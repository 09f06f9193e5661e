// Researcher mode (issue 13, item 5): code-server runs as root on the host, so a folder its editor
// creates in a session workspace must still be writable by the work container's user (default
// ACLs set by shareWorkspaceWithSolver). Real Docker, expbench/sandbox:1.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_IMAGE, shareWorkspaceWithSolver } from '../../src/core/sandbox';
import { requireDocker } from '../harness/docker';

describe('researcher mode: a folder the root editor creates is writable by the container user (issue 13)', function () {
  this.timeout(60_000);
  it('default ACLs on the shared workspace replace root\'s umask 022', async function () {
    await requireDocker(this);
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-acl-'));
    try {
      fs.mkdirSync(path.join(ws, 'src'));
      assert.equal(await shareWorkspaceWithSolver(ws), 'solver');
      const old = process.umask(0o022); // code-server as root, as scripts/start.sh runs it
      try {
        fs.mkdirSync(path.join(ws, 'src', 'made-by-root'));
        fs.writeFileSync(path.join(ws, 'src', 'made-by-root', 'f.txt'), 'x');
      } finally { process.umask(old); }
      const out = execFileSync('docker', ['run', '--rm', '--network', 'none', '-u', 'solver', '-v', `${ws}:/workspace`, DEFAULT_IMAGE,
        'sh', '-c', 'echo y >> /workspace/src/made-by-root/f.txt && mkdir /workspace/src/made-by-root/sub && echo ok'], { encoding: 'utf8' });
      assert.equal(out.trim(), 'ok');
    } finally {
      fs.rmSync(ws, { recursive: true, force: true });
    }
  });
});
