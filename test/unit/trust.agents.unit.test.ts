/**
 * Issue 26: the built-in agent (against a scripted model, test/harness/fakeOpenAIServer.ts) and an
 * outside agent through MCP (the SDK's own `Client` over stdio) plant the vectors of item 2
 * through their tools (`write_file` of a script, then `shell` in the work container as user
 * solver: test/fixtures/vectors.ts `CONTAINER_PLANT`), then work and submit. Submit freezes,
 * patches, verifies and judges on the host: nothing planted runs there (no marker in private/, no
 * file in the solver's .git/leak), and the submitted patch holds the agent's work.
 * Real Docker and expbench/sandbox:1; the CLI bundle (dist/cli.js).
 */
import * as assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type Docker from 'dockerode';
import { SessionLayout } from '../../src/core/layout';
import { readEvents } from '../../src/core/session/events';
import { readManifest } from '../../src/core/workspace/manifest';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { CONTAINER_PLANT, SOLVER_WORK } from '../fixtures/vectors';
import { API_KEY, ROOT, TASK_ID } from './agent.fixtures';

const CLI = path.join(ROOT, 'dist', 'cli.js');
const BASE_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_(JUDGE|AGENT)_)/.test(k))) as Record<string, string>;

function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...BASE_ENV, ...env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const DESIGN = {
  constants: [{ name: 'data', description: 'toycal synthetic blobs, seed 0' }],
  independent: [{ name: 'calibration', description: 'temperature fitted on validation or not', values: ['T = 1', 'fitted T'] }],
  dependent: [{ name: 'ECE', description: 'test calibration error' }],
  freeText: 'Fit T on validation NLL.',
};
const RUNNER = '#!/bin/bash\nset -e\ncat solver.txt nested/nested.txt\n';

/** The tool calls that plant every vector and do the agent's work (one list per model reply). */
function plantingCalls(objects: string, tree: string): Array<Array<{ name: string; arguments: Record<string, unknown> }>> {
  return [
    [{ name: 'write_file', arguments: { path: 'plant.sh', content: CONTAINER_PLANT } }, { name: 'write_file', arguments: { path: 'solver.txt', content: `${SOLVER_WORK}\n` } }],
    [{ name: 'shell', arguments: { command: `bash plant.sh '${objects}' ${tree} && rm plant.sh`, timeout_seconds: 60 } }],
    [{ name: 'write_file', arguments: { path: 'reproduce_exp_bench.sh', content: RUNNER } }, { name: 'set_design', arguments: DESIGN }],
    [{ name: 'set_conclusion', arguments: { text: 'The runner prints the work.' } }],
    [{ name: 'submit', arguments: {} }],
  ];
}

/** What a host that ran nothing planted leaves, and what the submission holds: [] when all is well. */
async function problemsOf(dir: string): Promise<string[]> {
  const layout = new SessionLayout(dir);
  const problems: string[] = [];
  const pwned = fs.readdirSync(layout.private).filter((n) => n.startsWith('pwned'));
  if (pwned.length) problems.push(`the host ran: ${[...new Set(pwned.map((n) => n.replace(/-\d+$/, '')))].join(', ')}`);
  const dotGit = path.join(layout.workspace, '.git');
  const loot = fs.readdirSync(dotGit).filter((n) => n.startsWith('leak')).flatMap((n) => fs.readdirSync(path.join(dotGit, n)).map((f) => `${n}/${f}`));
  if (loot.length) problems.push(`in the solver's .git: ${loot.join(', ')}`);
  if (!fs.existsSync(path.join(dotGit, 'objects', 'info', 'alternates'))) problems.push('the vectors were not planted (no alternates file)');
  const patch = fs.readFileSync(path.join(layout.harness, 'patch.diff'), 'utf8');
  for (const f of ['solver.txt', 'scratch.txt', 'reproduce_exp_bench.sh', 'nested/nested.txt']) {
    if (!new RegExp(`^diff --git a/${f.replace('.', '\\.')} `, 'm').test(patch)) problems.push(`${f} is not in the submitted patch`);
  }
  const events = (await readEvents(layout.events)).events;
  const verified = events.find((e) => e.type === 'verify.finished') as { ok?: boolean } | undefined;
  if (!verified?.ok) problems.push(`the verifier did not pass: ${JSON.stringify(verified)}`);
  const latest = JSON.parse(fs.readFileSync(path.join(layout.verify, 'latest.json'), 'utf8')) as { input?: { from: string } };
  if (latest.input?.from !== 'frozen') problems.push(`the verifier read ${latest.input?.from}, not the frozen submission`);
  return problems;
}

describe('issue 26: the built-in agent and an MCP client plant the vectors through their tools; nothing runs on the host', function () {
  this.timeout(900_000);
  let docker: Docker;
  let tmp: string;
  let cache: string;
  let objects: string;
  let tree: string;
  const sessions: string[] = [];

  before(async function () {
    docker = await requireDocker(this);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-trust-agents-'));
    cache = path.join(tmp, 'cache');
    // One preparation into the shared cache: the pristine repository and the pinned tree the vectors name.
    const probe = path.join(tmp, 'probe');
    const r = await cli({}, 'prepare', TASK_ID, '--out', probe, '--cache', cache);
    assert.equal(r.code, 0, r.stderr);
    const m = await readManifest(probe);
    objects = path.join(m.source.cacheRepo!, 'objects');
    tree = execFileSync('git', ['--git-dir', m.source.cacheRepo!, 'rev-parse', `${m.commit}^{tree}`], { encoding: 'utf8' }).trim();
  });
  after(async () => {
    if (docker) await assertNoContainers(docker, sessions);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the built-in agent (expbench agent run, a scripted model)', async () => {
    const server = await new FakeOpenAIServer().start();
    try {
      const out = path.join(tmp, `agent-${process.pid}`);
      sessions.push(path.basename(out));
      server.enqueue(...plantingCalls(objects, tree).map((toolCalls) => ({ toolCalls })));
      const r = await cli({ EXPBENCH_AGENT_BASE_URL: server.baseURL, EXPBENCH_AGENT_API_KEY: API_KEY },
        'agent', 'run', TASK_ID, '--model', 'scripted-agent', '--out', out, '--cache', cache, '--max-steps', '20', '--json');
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).agent.stop, 'submitted');
      const shell = (await readEvents(new SessionLayout(out).events)).events.find((e) => e.type === 'agent.tool_call' && e.tool === 'shell') as { observation?: string } | undefined;
      assert.ok(shell, 'the shell tool ran');
      assert.deepEqual(await problemsOf(out), []);
    } finally {
      await server.close();
    }
  });

  it('an outside agent through MCP (the SDK client, stdio)', async () => {
    const dir = path.join(tmp, `mcp-${process.pid}`);
    const prep = await cli({}, 'prepare', TASK_ID, '--out', dir, '--cache', cache);
    assert.equal(prep.code, 0, prep.stderr);
    sessions.push(path.basename(dir));
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'agent', 'mcp', dir], env: BASE_ENV, stderr: 'pipe' });
    const client = new Client({ name: 'expbench-trust-test', version: '0.1.0' });
    await client.connect(transport);
    try {
      for (const reply of plantingCalls(objects, tree)) {
        for (const call of reply) {
          const r = await client.callTool({ name: call.name, arguments: call.arguments }, undefined, { timeout: 600_000 });
          assert.notEqual(r.isError, true, `${call.name}: ${JSON.stringify(r.content)}`);
        }
      }
    } finally {
      await client.close();
    }
    assert.deepEqual(await problemsOf(dir), []);
  });
});
