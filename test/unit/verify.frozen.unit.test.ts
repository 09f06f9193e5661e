/**
 * Issue 26, item 3: what is verified is what was frozen. A session submitted with a script that
 * exits 3 (and a binary file), whose script is then rewritten to succeed (a file added, the binary changed) after Submit: both verify
 * modes run the frozen script (E_exit false, exit 3), the record says what it verified (the
 * frozen commit) and names the paths changed after Submit; the judge's patch is the frozen one.
 * Real Docker and expbench/sandbox:1.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { SessionLayout } from '../../src/core/layout';
import { readEvents } from '../../src/core/session/events';
import { submit } from '../../src/core/session/submit';
import { runVerification } from '../../src/core/verify';
import { makePatch } from '../../src/core/workspace/patch';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { makeSessionFolder } from './session-fixtures';

describe('issue 26: the frozen submission is what is verified (real Docker)', function () {
  this.timeout(300_000);
  let docker: Docker;
  let layout: SessionLayout;

  before(async function () {
    docker = await requireDocker(this);
    layout = await makeSessionFolder();
    fs.writeFileSync(layout.script, '#!/bin/bash\necho "frozen script"\ntail -c 10 weights.bin; echo\nexit 3\n');
    fs.writeFileSync(path.join(layout.workspace, 'result.txt'), 'accuracy 0.5\n');
    // A binary file (NUL bytes: never in the text patch) is frozen too.
    fs.writeFileSync(path.join(layout.workspace, 'weights.bin'), Buffer.concat([Buffer.from([0, 0, 255, 254, 0]), Buffer.from('FROZEN-BIN')]));
    await submit(layout, { design: 'd', conclusion: 'The accuracy is 0.5.' });
    // After Submit: the script rewritten to succeed, a file added, one changed (as the loop did).
    fs.writeFileSync(layout.script, '#!/bin/bash\necho "rewritten after submit"\nexit 0\n');
    fs.writeFileSync(path.join(layout.workspace, 'late.txt'), 'added after submit\n');
    fs.writeFileSync(path.join(layout.workspace, 'result.txt'), 'accuracy 0.99\n');
    fs.writeFileSync(path.join(layout.workspace, 'weights.bin'), Buffer.concat([Buffer.from([0, 0, 255, 254, 0]), Buffer.from('LATE-BIN--')]));
  });
  after(async () => {
    if (docker) await assertNoContainers(docker, [path.basename(layout.root)]);
    fs.rmSync(layout.root, { recursive: true, force: true });
  });

  for (const mode of ['clean', 'harness'] as const) {
    it(`${mode} mode runs the frozen script, records the frozen commit and the paths changed after Submit`, async () => {
      const r = await runVerification(layout.root, { mode, limits: { timeoutMs: 60_000 } });
      const stdout = fs.readFileSync(path.join(layout.root, r.logs.stdout), 'utf8');
      assert.match(stdout, /frozen script/);
      assert.doesNotMatch(stdout, /rewritten after submit/);
      assert.match(stdout, /FROZEN-BIN/, 'the frozen binary file, not the one written after Submit');
      assert.doesNotMatch(stdout, /LATE-BIN/);
      assert.equal(r.exitCode, 3);
      assert.equal(r.E_exit, false, 'the frozen exit 3, not the rewritten exit 0');
      const submitted = (await readEvents(layout.events)).events.find((e) => e.type === 'submitted') as { commit?: string };
      assert.equal(r.input?.from, 'frozen');
      assert.equal(r.input?.commit, submitted.commit);
      assert.deepEqual(r.input?.changedAfterSubmit, ['late.txt', 'reproduce_exp_bench.sh', 'result.txt', 'weights.bin']);
      assert.equal(r.input?.changedAfterSubmitCount, 4);
    });
  }

  it('the frozen commit holds the script as submitted; the judge\'s patch is the frozen one, the live patch differs', async () => {
    const submitted = (await readEvents(layout.events)).events.find((e) => e.type === 'submitted') as { commit?: string };
    const show = execFileSync('git', ['--git-dir', layout.repository, 'show', `${submitted.commit}:reproduce_exp_bench.sh`], { encoding: 'utf8' });
    assert.match(show, /exit 3/);
    const frozenPatch = fs.readFileSync(path.join(layout.harness, 'patch.diff'), 'utf8');
    assert.match(frozenPatch, /\+exit 3/);
    assert.doesNotMatch(frozenPatch, /late\.txt|rewritten after submit/);
    assert.equal(fs.readFileSync(path.join(layout.harness, 'reproduce_exp_bench.sh'), 'utf8'), '#!/bin/bash\necho "frozen script"\ntail -c 10 weights.bin; echo\nexit 3\n');
    const bin = execFileSync('git', ['--git-dir', layout.repository, 'cat-file', 'blob', `${submitted.commit}:weights.bin`]);
    assert.equal(bin.subarray(-10).toString('latin1'), 'FROZEN-BIN', 'the binary file is in the frozen commit');
    assert.match((await makePatch(layout.workspace)).patch, /rewritten after submit/, 'the live workspace did change (the check can fail)');
  });
});
