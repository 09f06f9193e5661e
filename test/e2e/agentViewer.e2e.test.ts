// Issue 18's must-show, end to end: `node dist/cli.js agent run sample/toycal/0` against the
// scripted OpenAI-compatible server (test/harness/fakeOpenAIServer.ts, the real `openai` client,
// the real work container) submits with E_clean true and no request holding the ground truth; the
// session's event log, opened with "Open as Trajectory" in code-server (headless Chromium), shows
// the agent's model calls and tool calls in their phases; the same session exported as an Inspect
// `.eval` (`expbench session export`) opens in the viewer with the same steps.
// Screenshots: docs/images/18-agent-steps-in-viewer.png, docs/images/18-agent-inspect-export-in-viewer.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importOwnEvents } from '../../src/core/trajectory/own';
import { getWorkbench } from '../harness/e2e-context';
import { viewerFrame } from '../harness/viewerFrame';
import { cli, OFFLINE_ENV } from '../unit/cli.helpers';

/** `node dist/cli.js …args` without endpoints, plus `env` (the scripted server's URL). */
const cliWith = (env: Record<string, string>, ...args: string[]) => cli(args, { env: { ...OFFLINE_ENV, ...env } });
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { repoRoot, testResultsDir } from '../harness/paths';
import type { Workbench } from '../harness/workbench';
import { forbiddenStrings, groundTruthSeen, sampleTask, solvingScript } from '../unit/agent.fixtures';

const IMAGES = path.join(repoRoot, 'docs', 'images');
const LOG = 'agent-run.events.jsonl';
const EVAL = 'agent-run.eval';



describe('issue 18: the built-in agent\'s run in the trajectory viewer (end to end)', function () {
  this.timeout(420_000);
  let wb: Workbench;
  let tmp: string;
  let folder: string;
  let server: FakeOpenAIServer;

  before(async () => {
    wb = getWorkbench();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-agent-e2e-'));
    folder = path.join(testResultsDir, 'e2e-agent', `runs-${process.pid}`);
    fs.mkdirSync(folder, { recursive: true });
    fs.mkdirSync(IMAGES, { recursive: true });
    server = await new FakeOpenAIServer().start();
  });
  after(async () => {
    await server?.close();
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(folder, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('agent run sample/toycal/0 submits (E_clean, no ground truth sent); its steps in the viewer; its Inspect export too', async () => {
    const session = path.join(tmp, 'agent-session');
    server.enqueue(...solvingScript());
    const r = await cliWith({ EXPBENCH_AGENT_BASE_URL: server.baseURL }, 'agent', 'run', 'sample/toycal/0', '--model', 'scripted-agent', '--out', session, '--cache', path.join(tmp, 'cache'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^sample\/toycal\/0: submitted after 7 steps \(9 tool calls, 840 tokens, .*verify: E_clean pass/);
    assert.deepEqual(groundTruthSeen(server, forbiddenStrings(await sampleTask())), []);

    const events = path.join(session, 'private', 'events.jsonl');
    const traj = await importOwnEvents(events);
    const shell = traj.steps.find((s) => s.kind === 'tool' && s.action?.tool === 'shell')!;
    fs.copyFileSync(events, path.join(folder, LOG));
    const x = await cliWith({}, 'session', 'export', session, '--format', 'inspect-eval', '--out', path.join(folder, EVAL));
    assert.equal(x.code, 0, x.stderr);

    await wb.openFolder(folder);
    await wb.page.keyboard.press('Control+Shift+E');
    await wb.contextMenu(await wb.treeItem(LOG), 'Open as Trajectory');
    const f = await viewerFrame(wb, LOG);
    const rows = (await f.locator('.row[data-step]').allInnerTexts()).join('\n');
    for (const tool of ['list_files', 'set_design', 'write_file', 'shell', 'run_script', 'set_conclusion', 'submit']) assert.match(rows, new RegExp(tool));
    await f.locator(`.row[data-step="${shell.index}"]`).click();
    await f.locator(`.detail-body[data-step="${shell.index}"]`).waitFor({ state: 'visible', timeout: 30_000 });
    assert.match(await f.locator('.detail-body').innerText(), /ece_after = 0\.0123/);
    await wb.dismissHovers();
    const file = path.join(IMAGES, '18-agent-steps-in-viewer.png');
    await wb.page.screenshot({ path: file });
    assert.ok(fs.statSync(file).size > 20_000, 'the screenshot has content');

    // the Inspect export, opened in the viewer
    await wb.contextMenu(await wb.treeItem(EVAL), 'Open as Trajectory');
    const g = await viewerFrame(wb, EVAL);
    const evalRows = (await g.locator('.row[data-step]').allInnerTexts()).join('\n');
    for (const tool of ['list_files', 'set_design', 'shell', 'submit']) assert.match(evalRows, new RegExp(tool));
    await wb.dismissHovers();
    const file2 = path.join(IMAGES, '18-agent-inspect-export-in-viewer.png');
    await wb.page.screenshot({ path: file2 });
    assert.ok(fs.statSync(file2).size > 20_000, 'the screenshot has content');
  });
});
