// Issue 19 end to end: an outside agent's work, recorded through the MCP server, read in the
// trajectory viewer (code-server in headless Chromium). Two real MCP SDK clients work one prepared
// sample session through `node dist/cli.js agent mcp` (stdio, then Streamable HTTP with the token);
// the session's event log, opened with "Open as Trajectory", shows their tool steps with the
// container's output and the "outside agent … attached … unconfined" rows.
// EXPBENCH_OUTSIDE_SESSION=<dir>: work a copy of that session instead of a freshly prepared one,
// e.g. one a language-model tools run kept (EXPBENCH_KEEP_LM_SESSION, test/vscode/lmTools.vscode.test.ts),
// so that the viewer shows the steps of both kinds; only then is the screenshot written to
// docs/images/19-outside-agent-steps.png (docs/outside-agents.md, "How the screenshot was made"),
// else to test-results/e2e-outside/.
import * as assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { importOwnEvents } from '../../src/core/trajectory/own';
import { getWorkbench } from '../harness/e2e-context';
import { viewerFrame } from '../harness/viewerFrame';
import { repoRoot, testResultsDir } from '../harness/paths';
import type { Workbench } from '../harness/workbench';

const CLI = path.join(repoRoot, 'dist', 'cli.js');
const IMAGES = path.join(repoRoot, 'docs', 'images');
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_(JUDGE|AGENT)_)/.test(k))) as Record<string, string>;
const LOG = 'outside-agent.events.jsonl';

function run(...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => execFile(process.execPath, [CLI, ...args], { env: ENV }, (e, _o, err) => (e ? reject(new Error(`${args.join(' ')}: ${err}`)) : resolve())));
}


describe('issue 19: an outside agent\'s MCP calls in the trajectory viewer (end to end)', function () {
  this.timeout(300_000);
  let wb: Workbench;
  let tmp: string;
  let folder: string;

  before(async () => {
    wb = getWorkbench();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-outside-e2e-'));
    folder = path.join(testResultsDir, 'e2e-outside', `runs-${process.pid}`);
    fs.mkdirSync(folder, { recursive: true });
    fs.mkdirSync(IMAGES, { recursive: true });
  });
  after(async () => {
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(folder, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('two MCP clients work a session; the viewer shows their tool steps and the unconfined marks', async () => {
    const session = path.join(tmp, 'session');
    const prepared = process.env.EXPBENCH_OUTSIDE_SESSION;
    if (prepared) fs.cpSync(prepared, session, { recursive: true });
    else await run('prepare', 'sample/toycal/0', '--out', session, '--cache', path.join(tmp, 'cache'));
    const lmSteps = prepared ? (await importOwnEvents(path.join(session, 'private', 'events.jsonl'))).steps.filter((s) => (s.extra as any)?.via === 'lm') : [];
    if (prepared) assert.ok(lmSteps.length > 0, `${prepared} holds no language-model tool steps`);

    const stdio = new Client({ name: 'claude-code-like (stdio)', version: '1.0.0' });
    await stdio.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'agent', 'mcp', session, ...(prepared ? ['--take-over'] : [])], env: ENV, stderr: 'ignore' }));
    await stdio.callTool({ name: 'read_brief', arguments: {} });
    await stdio.callTool({ name: 'list_files', arguments: { depth: 2 } });
    await stdio.callTool({ name: 'shell', arguments: { command: 'id; python3 -c "import toycal, sys; print(sys.version.split()[0])"' } }, undefined, { timeout: 120_000 });
    await stdio.callTool({ name: 'read_file', arguments: { path: '../private/task.json' } });
    await stdio.close();

    const child = spawn(process.execPath, [CLI, 'agent', 'mcp', session, '--http', '127.0.0.1:0', '--no-verify', '--no-judge'], { env: ENV, stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let stderr = '';
    const { url, token } = await new Promise<{ url: string; token: string }>((resolve) => child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      const u = /at (http:\S+\/mcp)\n/.exec(stderr)?.[1];
      const t = /mode 0600\): (\S+)\n/.exec(stderr)?.[1];
      if (u && t) resolve({ url: u, token: t });
    }));
    const http = new Client({ name: 'codex-like (http)', version: '2.0.0' });
    await http.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    await http.callTool({ name: 'set_design', arguments: {
      constants: [{ name: 'data', description: 'toycal blobs, seed 0' }],
      independent: [{ name: 'calibration', description: 'T fitted or not', values: ['T = 1', 'fitted T'] }],
      dependent: [{ name: 'ECE', description: 'test calibration error' }], freeText: 'Grid-fit T on validation NLL.',
    } });
    await http.callTool({ name: 'shell', arguments: { command: 'ls toycal && whoami' } }, undefined, { timeout: 120_000 });
    await http.close();
    child.kill('SIGTERM');
    await exited;

    const events = path.join(session, 'private', 'events.jsonl');
    const traj = await importOwnEvents(events);
    const tools = traj.steps.filter((s) => s.kind === 'tool' && s.actor === 'agent' && (s.extra as any)?.via === 'mcp');
    assert.deepEqual(traj.steps.filter((s) => (s.extra as any)?.via === 'lm').map((s) => s.index), lmSteps.map((s) => s.index), 'the language-model steps stay as they were');
    assert.deepEqual(tools.map((s) => `${(s.extra as any)?.client}:${s.action?.tool}`), [
      'claude-code-like (stdio):read_brief', 'claude-code-like (stdio):list_files', 'claude-code-like (stdio):shell', 'claude-code-like (stdio):read_file',
      'codex-like (http):set_design', 'codex-like (http):shell',
    ]);
    fs.copyFileSync(events, path.join(folder, LOG));
    await wb.openFolder(folder);
    await wb.page.keyboard.press('Control+Shift+E');
    await wb.contextMenu(await wb.treeItem(LOG), 'Open as Trajectory');
    const f = await viewerFrame(wb, LOG);
    const rows = (await f.locator('.row[data-step]').allInnerTexts()).join('\n');
    assert.match(rows, /outside agent claude-code-like \(stdio\) 1\.0\.0 attached through MCP/);
    assert.match(rows, /shell/);
    const shellStep = tools[2].index;
    await f.locator(`.row[data-step="${shellStep}"]`).click();
    await f.locator(`.detail-body[data-step="${shellStep}"]`).waitFor({ state: 'visible', timeout: 30_000 });
    assert.match(await f.locator('.detail-body').innerText(), /uid=\d+\(solver\)/);
    const lmShell = lmSteps.find((s) => s.action?.tool === 'shell');
    if (lmShell) {
      await f.locator(`.row[data-step="${lmShell.index}"]`).click();
      await f.locator(`.detail-body[data-step="${lmShell.index}"]`).waitFor({ state: 'visible', timeout: 30_000 });
      const more = f.locator('.detail-body summary', { hasText: 'Other fields of the source event' });
      await more.click();
      await more.scrollIntoViewIfNeeded();
      const detail = await f.locator('.detail-body').innerText();
      assert.match(detail, /vscode-extension/);
      assert.match(detail, /\blm\b/);
      assert.match(detail, /\nsolver\n\/workspace/);
    }
    await wb.dismissHovers();
    const file = prepared ? path.join(IMAGES, '19-outside-agent-steps.png') : path.join(testResultsDir, 'e2e-outside', '19-outside-agent-steps.png');
    await wb.page.screenshot({ path: file });
    assert.ok(fs.statSync(file).size > 20_000, 'the screenshot has content');
  });
});
