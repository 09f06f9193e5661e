/**
 * A verify run's recorded duration is the script's own (from the wrapper's `start` marker to its
 * `end` marker), also for a script shorter than the limit clock's 100 ms poll, and never a time
 * outside the run when the script touches the markers itself (the output folder is the script's
 * to write). Real Docker and expbench/sandbox:1.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import type { SessionLayout } from '../../src/core/layout';
import { runVerification } from '../../src/core/verify';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { makeSessionFolder } from './session-fixtures';

describe('verify: the recorded duration is the script\'s own (real Docker)', function () {
  this.timeout(300_000);
  let docker: Docker;
  const layouts: SessionLayout[] = [];

  before(async function () {
    docker = await requireDocker(this);
  });
  after(async () => {
    if (docker) await assertNoContainers(docker, layouts.map((l) => path.basename(l.root)));
    for (const l of layouts) fs.rmSync(l.root, { recursive: true, force: true });
  });

  async function session(script: string): Promise<SessionLayout> {
    const layout = await makeSessionFolder();
    layouts.push(layout);
    fs.writeFileSync(layout.script, `#!/bin/bash\n${script}\n`);
    fs.writeFileSync(layout.answers, JSON.stringify({ design: 'd', conclusion: 'c' }));
    return layout;
  }

  it('a script that only echoes has its start recorded and a duration within start → end of the run', async () => {
    const layout = await session('echo "result 0.93"');
    const r = await runVerification(layout.root, { limits: { timeoutMs: 60_000 } });
    assert.equal(r.exitCode, 0, JSON.stringify(r.error));
    assert.ok(r.scriptStartedAt, 'the record names when the script started');
    const start = Date.parse(r.scriptStartedAt);
    assert.ok(start >= Date.parse(r.startedAt) - 1000 && start <= Date.parse(r.endedAt!), `the start ${r.scriptStartedAt} lies within the run ${r.startedAt} → ${r.endedAt}`);
    assert.ok(r.durationMs! <= Date.parse(r.endedAt!) - start, `duration ${r.durationMs} ms is no longer than from the script's start to the run's end`);
  });

  it('markers the script touches to other times do not stretch the duration beyond the run, nor make its own exit a time-out (was: killed at once as timed out)', async () => {
    const layout = await session('touch -d 2001-01-01 /tmp/.expbench/start; touch -d 2099-01-01 /tmp/.expbench/end; exit 124');
    const r = await runVerification(layout.root, { limits: { timeoutMs: 60_000 } });
    const runMs = Date.parse(r.endedAt!) - Date.parse(r.startedAt);
    assert.equal(r.exitCode, 124, 'the script\'s own exit code');
    assert.ok(r.durationMs! <= runMs + 1000, `duration ${r.durationMs} ms is within the run's ${runMs} ms`);
    assert.equal(r.timedOut, false, 'an exit 124 within the time limit is the script\'s failure, not a time-out');
    assert.equal(r.E_exit, false);
  });
});
