/**
 * The long-running commands end by themselves on SIGHUP (the terminal or SSH connection closed),
 * as they do on Ctrl-C and SIGTERM (src/cli/signals.ts). `campaign serve` and `agent mcp` listened
 * for SIGINT and SIGTERM only: a SIGHUP had node's default, which ended the process at once and
 * left the campaign's proctored containers running unwatched, or the MCP session's token file and
 * lease behind. `baseline serve`: proctor.serve-hangup. The bundled CLI and real Docker.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { SessionLayout } from '../../src/core/layout';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { buildRunSetFixture } from '../harness/runSetFixture';
import { until } from '../harness/until';
import { cli, CLI, OFFLINE_ENV } from './cli.helpers';

const KEY = `hangup-${'k'.repeat(40)}`;
const SPEC = `{
  "version": 1,
  "name": "one person, one task",
  "datasets": ["exp-bench"],
  "tasks": ["fixture2026/90001/0"],
  "baseline": {"baseliners": [{"id": "ana"}], "assignment": "balanced"}
}`;

/** Spawns the CLI with `args`; resolves with its output once `ready` shows in it, with a way to wait for its exit. */
async function started(args: string[], ready: RegExp, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const o = { child, log: '', exited: new Promise<number | null>((r) => child.once('exit', (code) => r(code))) };
  child.stdout.setEncoding('utf8').on('data', (d: string) => { o.log += d; });
  child.stderr.setEncoding('utf8').on('data', (d: string) => { o.log += d; });
  await until(`${args.slice(0, 2).join(' ')} to be ready`, async () => (ready.test(o.log) ? true : child.exitCode !== null ? Promise.reject(new Error(o.log)) : undefined), 120_000);
  return o;
}

describe('SIGHUP ends campaign serve and agent mcp by themselves, as Ctrl-C does', function () {
  this.timeout(300_000);
  let docker: Docker;
  let tmp = '';
  const sessions: string[] = [];

  before(async function () {
    docker = await requireDocker(this);
    assert.ok(fs.existsSync(CLI), `${CLI} is missing: npm run build first`);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-cli-hangup-'));
  });
  after(async () => {
    if (docker) await assertNoContainers(docker, sessions);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('campaign serve: exit 0 after SIGHUP, saying it stops the campaign, the front door closed', async () => {
    await buildRunSetFixture(tmp, 1);
    fs.writeFileSync(path.join(tmp, 'campaign.jsonc'), SPEC);
    const dir = path.join(tmp, 'campaign');
    const made = await cli(['campaign', 'create', path.join(tmp, 'campaign.jsonc'), '--out', dir], { env: OFFLINE_ENV });
    assert.equal(made.code, 0, made.stderr);
    const env = { ...OFFLINE_ENV, EXPBENCH_CAMPAIGN_KEY: KEY };
    const o = await started(['campaign', 'serve', dir, '--port', '0', '--cache', path.join(tmp, 'cache')], /served on (http:\/\/127\.0\.0\.1:\d+)/, env);
    const origin = /served on (http:\/\/127\.0\.0\.1:\d+)/.exec(o.log)![1];
    try {
      o.child.kill('SIGHUP');
      assert.equal(await o.exited, 0, `ended by itself, not by the signal: ${o.log}`);
      assert.match(o.log, /stopping the campaign/);
      assert.match(o.log, /expbench: stopped/);
      await assert.rejects(fetch(origin), 'the front door is closed');
    } finally {
      if (o.child.exitCode === null) o.child.kill('SIGKILL');
    }
  });

  it('agent mcp over HTTP: exit 0 after SIGHUP, its token file removed (the clean-up ran)', async () => {
    const out = path.join(tmp, `mcp-hangup-${process.pid}`);
    const prepared = await cli(['prepare', 'sample/toycal/0', '--out', out, '--cache', path.join(tmp, 'cache')], { env: OFFLINE_ENV });
    assert.equal(prepared.code, 0, prepared.stderr);
    sessions.push(path.basename(out));
    const o = await started(['agent', 'mcp', out, '--http', '127.0.0.1:0', '--no-verify', '--no-judge'], /mode 0600\): \S+\n/, OFFLINE_ENV);
    const token = path.join(new SessionLayout(out).private, 'mcp-token');
    try {
      assert.ok(fs.existsSync(token), 'the token file is written while it serves');
      o.child.kill('SIGHUP');
      assert.equal(await o.exited, 0, `ended by itself, not by the signal: ${o.log}`);
      assert.equal(fs.existsSync(token), false, 'the token file is removed');
    } finally {
      if (o.child.exitCode === null) o.child.kill('SIGKILL');
    }
  });
});
