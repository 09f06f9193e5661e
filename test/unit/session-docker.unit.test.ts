import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { DEFAULT_IMAGE, ensureWorkContainer, removeWorkContainer } from '../../src/core/sandbox';
import { claimsStatus } from '../../src/core/verify/sessionClaims';
import { readEvents } from '../../src/core/session/events';
import { containerExec, runScript } from '../../src/core/session/runs';
import { Session } from '../../src/core/session/session';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { makeSessionFolder } from './session-fixtures';

describe('session script runs in the real work container (Docker)', function () {
  this.timeout(120_000);
  let docker: Docker;
  const sessionId = `test-session-runs-${process.pid}`;

  before(async function () { docker = await requireDocker(this); });
  after(async () => {
    if (!docker) return;
    await removeWorkContainer(docker, sessionId);
    await assertNoContainers(docker, [sessionId]);
  });

  it('runs reproduce_exp_bench.sh in /workspace of the work container, streams its log, records the run', async () => {
    const layout = await makeSessionFolder();
    try {
      await fsp.writeFile(layout.script, 'set -e\necho "host: $(hostname)"\necho "cwd: $(pwd)"\npython3 -c "print(\'accuracy\', round(0.9312, 4))"\necho "émoji ✓" >&2\nexit 7\n');
      const { container } = await ensureWorkContainer(docker, {
        task: 'test/runs/0', session: sessionId, workspaceDir: layout.workspace, image: DEFAULT_IMAGE, limits: { network: false },
      });
      const s = await Session.open(layout, { client: 'test' });
      const run = await runScript(s, { exec: containerExec(container) });
      await s.close();
      assert.equal(run.exitCode, 7);
      const log = await fsp.readFile(path.join(layout.root, run.log), 'utf8');
      assert.match(log, /^cwd: \/workspace$/m);
      assert.match(log, /^accuracy 0\.9312$/m);
      assert.match(log, /émoji ✓/);
      assert.doesNotMatch(log, new RegExp(`host: ${os.hostname()}$`, 'm'), 'ran in the container, not on the host');
      const ev = (await readEvents(layout.events)).events.find((e) => e.type === 'script.run');
      assert.ok(ev && ev.type === 'script.run' && ev.exitCode === 7);
      const claims = await claimsStatus(layout, 'The accuracy is 93.1%.');
      assert.equal(claims.claims[0].found, true);
    } finally {
      await fsp.rm(layout.root, { recursive: true, force: true }).catch(() => undefined);
    }
  });
});
