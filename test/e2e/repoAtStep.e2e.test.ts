// Issue 17's "a judge verdict pinned to a step" and "the repository at a step", end to end:
// `node dist/cli.js agent run sample/toycal/0` against the scripted server (the real container; the
// agent runs `git log`, writes its script, then edits one line of it; the heuristic judge runs at
// submit); the session's event log opened with "Open as Trajectory" in code-server shows verdicts
// pinned to the steps that wrote their evidence and the git log flag on its step; "Repository at
// this step" on the edit step opens the changed files against the prepared workspace.
// A curator then flips the pinned verdict from the viewer (stored in the review store).
// Screenshots: docs/images/17-verdict-pinned.png, docs/images/17-repo-at-step.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importOwnEvents } from '../../src/core/trajectory/own';
import { pinsFor } from '../../src/core/viewer/pins';
import { getWorkbench } from '../harness/e2e-context';
import { answerInputBox, clickUntilQuickInput, pickQuickRow } from '../harness/quickInput';
import { viewerFrame } from '../harness/viewerFrame';
import { cli, OFFLINE_ENV } from '../unit/cli.helpers';

/** `node dist/cli.js …args` without endpoints, plus `env` (the scripted server's URL). */
const cliWith = (env: Record<string, string>, ...args: string[]) => cli(args, { env: { ...OFFLINE_ENV, ...env } });
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { repoRoot } from '../harness/paths';
import { escapeRe, type Workbench } from '../harness/workbench';
import { pinningScript } from '../unit/pins.fixtures';

const IMAGES = path.join(repoRoot, 'docs', 'images');



describe('issue 17: verdicts pinned to steps and the repository at a step (end to end)', function () {
  this.timeout(420_000);
  let wb: Workbench;
  let tmp: string;
  let server: FakeOpenAIServer;

  before(async () => {
    wb = getWorkbench();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-repo-e2e-'));
    fs.mkdirSync(IMAGES, { recursive: true });
    server = await new FakeOpenAIServer().start();
  });
  after(async () => {
    await server?.close();
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('an agent session in the viewer: a verdict on the step that wrote its lines; the repository at that step', async () => {
    const session = path.join(tmp, 'agent-session');
    server.enqueue(...pinningScript());
    const r = await cliWith({ EXPBENCH_AGENT_BASE_URL: server.baseURL }, 'agent', 'run', 'sample/toycal/0', '--model', 'scripted-agent', '--out', session, '--cache', path.join(tmp, 'cache'));
    assert.equal(r.code, 0, r.stderr);
    const traj = await importOwnEvents(path.join(session, 'private', 'events.jsonl'));
    const pins = await pinsFor(traj);
    const fix = traj.steps.find((s) => s.action?.tool === 'replace_in_file')!.index;
    const onFix = pins.filter((p) => p.step === fix && p.kind === 'verdict');
    assert.ok(onFix.length > 0, `a verdict on the edit step ${fix}: ${JSON.stringify(pins)}`);
    assert.ok(pins.some((p) => p.kind === 'flag' && p.why.startsWith('ran git log')), 'the git log flag is pinned');

    await wb.openFolder(session);
    await wb.page.keyboard.press('Control+Shift+E');
    await wb.contextMenu(await wb.revealTreePath(['private', 'events.jsonl']), 'Open as Trajectory');
    const f = await viewerFrame(wb, 'events.jsonl');
    const row = f.locator(`.row[data-step="${fix}"]`);
    await row.waitFor({ state: 'visible', timeout: 30_000 });
    assert.match(await row.innerText(), /pinned \d/);
    await row.click();
    const detail = f.locator(`.detail-body[data-step="${fix}"]`);
    await detail.waitFor({ state: 'visible', timeout: 30_000 });
    await detail.locator('ul.pins').waitFor({ state: 'visible', timeout: 30_000 });
    const text = await detail.innerText();
    assert.match(text, new RegExp(`${onFix[0].label}`));
    assert.match(text, /why this step: wrote the cited lines experiments\/calibrate_agent\.py:/);
    await wb.dismissHovers();
    const pinned = path.join(IMAGES, '17-verdict-pinned.png');
    await wb.page.screenshot({ path: pinned });
    assert.ok(fs.statSync(pinned).size > 20_000, 'the screenshot has content');

    // "Repository at this step": the changed files against the prepared workspace, and the tree's files in a quick pick.
    await detail.getByRole('button', { name: 'Repository at this step' }).click();
    const tab = wb.page.locator('.part.editor .tab .label-name', { hasText: `agent-session at step ${fix}` }).first();
    await tab.waitFor({ state: 'visible', timeout: 60_000 });
    const pick = wb.page.locator('.quick-input-widget');
    await pick.waitFor({ state: 'visible', timeout: 30_000 });
    await pick.locator('input').fill('experiments');
    await pick.locator('.monaco-list-row', { hasText: 'calibrate_agent.py' }).first().waitFor({ state: 'visible', timeout: 30_000 });
    await wb.page.locator('.part.editor').getByText('for k in range(91)]  # 0.5..5.0').first().waitFor({ state: 'visible', timeout: 30_000 });
    const repo = path.join(IMAGES, '17-repo-at-step.png');
    await wb.page.screenshot({ path: repo });
    assert.ok(fs.statSync(repo).size > 20_000, 'the screenshot has content');
    await wb.page.keyboard.press('Escape');

    // A curator flips the pinned verdict from the viewer (issue 21, item 4): the quick pick of the
    // other verdicts, a reason, stored in the review store as the gap report stores it.
    const reviewDir = process.env.EXPBENCH_E2E_REVIEW_DIR;
    assert.ok(reviewDir, 'EXPBENCH_E2E_REVIEW_DIR is set by run-e2e.js');
    await wb.page.locator('.part.editor .tab', { hasText: 'events.jsonl' }).first().click();
    const again = await viewerFrame(wb, 'events.jsonl');
    const pinItem = again.locator(`.detail-body[data-step="${fix}"] ul.pins li`).first();
    await pinItem.waitFor({ state: 'visible', timeout: 30_000 });
    const flip = await clickUntilQuickInput(wb, pinItem.getByRole('button', { name: 'Flip…' }));
    const first = flip.locator('.monaco-list-row').first();
    await first.waitFor({ state: 'visible', timeout: wb.timeoutMs });
    const choice = (await first.innerText()).trim().split(/\s+/)[0];
    const box = new RegExp(`^Flip ${escapeRe(onFix[0].item)}: .* → ${escapeRe(choice)}$`);
    await pickQuickRow(wb, choice, box);
    const reason = 'the edit only adds a comment; the cited lines were written a step earlier';
    await answerInputBox(wb, box, reason);
    const flipDeadline = Date.now() + 30_000;
    let stored: { kind: string; subject: { item?: string }; value: { verdict: string; judged: string }; reason?: string } | undefined;
    while (!stored && Date.now() < flipDeadline) {
      const files = !fs.existsSync(reviewDir!) ? [] : fs.readdirSync(reviewDir!, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.json')).map((e) => path.join(e.parentPath, e.name));
      stored = files.map((f2) => JSON.parse(fs.readFileSync(f2, 'utf8'))).find((j) => j.kind === 'verdict-flip' && j.subject?.item === onFix[0].item && j.reason === reason);
      if (!stored) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(stored, `a verdict-flip of ${onFix[0].item} with the reason in ${reviewDir}`);
    assert.equal(stored!.value.verdict, choice);
    assert.notEqual(stored!.value.verdict, stored!.value.judged);
  });
});
