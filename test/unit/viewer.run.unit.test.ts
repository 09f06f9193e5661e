/**
 * Whose run a session is (src/core/viewer/run.ts, docs/triage.md): a session worked by an outside
 * agent (an MCP client, a VS Code chat agent through the language-model tools) is an agent's run
 * named after its clients, not a person's — the triage table and `report --by actor` group by it.
 * The event lines are the real event schema (src/core/steps/events.ts), as a session writes them.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSessionRun } from '../../src/core/viewer/run';

async function sessionWith(events: object[]): Promise<string> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-viewer-run-'));
  await fsp.mkdir(path.join(dir, 'private'), { recursive: true });
  await fsp.writeFile(path.join(dir, 'private', 'events.jsonl'), events.map((e) => JSON.stringify({ v: 1, at: '2026-12-01T17:57:27.553Z', ...e })).join('\n') + '\n');
  return dir;
}

describe('viewer: whose run a session is', () => {
  const dirs: string[] = [];
  after(async () => { await Promise.all(dirs.map((d) => fsp.rm(d, { recursive: true, force: true }))); });

  it('an MCP client and a chat agent attached: actor agent, named after the clients', async () => {
    const dir = await sessionWith([
      { type: 'session.opened', client: 'mcp', restored: false, taskId: 'sample/toycal/0' },
      { type: 'agent.attached', client: 'claude-code', via: 'mcp', transport: 'stdio', unconfined: true },
      { type: 'agent.tool_call', tool: 'shell', arguments: '{"command":"ls"}', result: 'exit code 0\ntoycal\n', exitCode: 0, durationMs: 12, client: 'claude-code', via: 'mcp' },
      { type: 'agent.attached', client: 'vscode-extension', via: 'lm', transport: 'vscode', unconfined: false },
    ]);
    dirs.push(dir);
    const run = await loadSessionRun(dir);
    assert.equal(run.actor, 'agent');
    assert.equal(run.agent, 'claude-code, vscode-extension');
    assert.equal(run.task, 'sample/toycal/0');
  });

  it('a person\'s session (no agent event): actor human', async () => {
    const dir = await sessionWith([
      { type: 'session.opened', client: 'vscode', restored: false, taskId: 'sample/toycal/0' },
      { type: 'note.added', text: 'looked at the data' },
    ]);
    dirs.push(dir);
    const run = await loadSessionRun(dir);
    assert.equal(run.actor, 'human');
    assert.equal(run.agent, 'human');
  });
});
