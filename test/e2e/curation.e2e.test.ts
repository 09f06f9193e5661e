// Curators in the real workbench (code-server in headless Chromium), issue 21: a judged session of
// the sample (the partial one of test/harness/agreementSessions.ts, made by the real core
// functions) is opened; in its gap report the curator flips the heuristic's verdict of the design
// variable `dataset` (matched → partial, with a reason) through the quick pick and the input box;
// the flip lands in the review store (`expbench.review.folder`, set by run-e2e.ts) and shows in
// the report. Then "Show Judge Agreement (Curator)" on the committed labelled sessions
// (test/data/agreement) shows the table and the κ plot. Screenshots: 21-verdict-flipped, 21-agreement-view.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { agreementVariants, buildAgreementSession, SAMPLE_TASK_ID } from '../harness/agreementSessions';
import { getWorkbench } from '../harness/e2e-context';
import { repoRoot, testResultsDir } from '../harness/paths';
import { answerInputBox, clickUntilQuickInput, pickQuickRow } from '../harness/quickInput';

const TITLE = `Brief ${SAMPLE_TASK_ID}`;
const REASON = 'names the dataset, no seed, no split sizes';

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.json')).map((e) => path.join(e.parentPath, e.name));
}

describe('curators: flip a verdict in the gap report, the agreement view (end to end)', function () {
  this.timeout(300_000);
  let tmp: string;
  let session: string;
  const review = () => {
    const d = process.env.EXPBENCH_E2E_REVIEW_DIR;
    if (!d) throw new Error('EXPBENCH_E2E_REVIEW_DIR is not set: run through run-e2e.js');
    return d;
  };

  before(async () => {
    tmp = path.join(testResultsDir, 'e2e-sessions', `curation-${process.pid}-${Date.now()}`);
    fs.mkdirSync(tmp, { recursive: true });
    const partial = (await agreementVariants()).find((v) => v.name === 'B-partial')!;
    session = (await buildAgreementSession(tmp, path.join(tmp, 'cache'), partial)).root;
    await getWorkbench().openFolder(path.join(session, 'workspace'));
  });

  after(async () => {
    const wb = getWorkbench();
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('flips the judge\'s verdict of a design variable with a reason; the report shows who and the store holds it', async () => {
    const wb = getWorkbench();
    await wb.webviewFrame(TITLE);
    await wb.runCommand('EXP-Bench: Refresh Gap Annotations');
    await wb.runCommand('EXP-Bench: Show Session Brief and Phases');
    const frame = await wb.webviewFrame(TITLE);
    const report = frame.locator('section[data-section="gaps"]');
    await report.waitFor({ state: 'visible', timeout: wb.timeoutMs });
    const row = report.locator('.gap-phase[data-phase="design"] .gap-review[data-item="design:dataset"]');
    await row.waitFor({ state: 'visible', timeout: wb.timeoutMs });
    assert.match(await row.innerText(), /Curator: not reviewed/);
    await clickUntilQuickInput(wb, row.locator('a[data-action="flipVerdict"]'));
    await pickQuickRow(wb, 'partial', 'Flip design:dataset: matched → partial');
    await answerInputBox(wb, 'Flip design:dataset: matched → partial', REASON);
    const flipped = report.locator('.gap-review[data-item="design:dataset"][data-curator="partial"]');
    await flipped.waitFor({ state: 'visible', timeout: wb.timeoutMs });
    const text = (await flipped.innerText()).replace(/\s+/g, ' ');
    assert.match(text, /Curator: flipped matched → partial \(.+, \d{4}-\d\d-\d\d \d\d:\d\d\) — names the dataset, no seed, no split sizes/);
    const stored = filesUnder(review()).map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
    const mine = stored.find((j) => j.kind === 'verdict-flip' && j.subject.item === 'design:dataset');
    assert.ok(mine, `no verdict-flip in ${review()}`);
    assert.deepEqual(mine.value, { verdict: 'partial', judged: 'matched' });
    assert.equal(mine.reason, REASON);
    assert.equal(mine.subject.task, SAMPLE_TASK_ID);
    assert.ok(!fs.existsSync(path.join(session, 'workspace', '.expbench-review')), 'the store is never inside the solver\'s workspace');
    await flipped.evaluate((e) => e.closest('.gap-phase')!.scrollIntoView({ block: 'start' }));
    const shot = await wb.screenshot('21-verdict-flipped');
    fs.copyFileSync(shot, path.join(repoRoot, 'docs', 'images', '21-verdict-flipped.png'));
  });

  it('shows the agreement of the heuristic with the committed labels: the table and the κ plot', async () => {
    const wb = getWorkbench();
    // the labelled sessions as the window's folder, the labeller's judgements as its own review store
    // (a folder setting, which the curator trusts: expbench.review.folder is taken from a trusted folder only)
    const sessions = path.join(tmp, 'labelled-sessions');
    fs.cpSync(path.join(repoRoot, 'test', 'data', 'agreement', 'sessions'), sessions, { recursive: true });
    fs.cpSync(path.join(repoRoot, 'test', 'data', 'agreement', 'review'), path.join(sessions, '.expbench-review'), { recursive: true });
    fs.mkdirSync(path.join(sessions, '.vscode'));
    fs.writeFileSync(path.join(sessions, '.vscode', 'settings.json'), JSON.stringify({ 'expbench.review.folder': path.join(sessions, '.expbench-review') }));
    await wb.openFolder(sessions);
    await wb.trustWorkspace();
    await wb.runCommand('EXP-Bench: Show Judge Agreement (Curator)');
    const frame = await wb.webviewFrame('Judge Agreement');
    await wb.waitForText(/heuristic \(expbench-judge-1\) · design · labeller 1, language model/, frame);
    const said = await frame.locator('p.muted').first().innerText();
    assert.match(said, /^56 labels by 1 labeller \(labeller 1, language model, 2026-12-01\); 52 judged items read from labelled-sessions; labels from labelled-sessions\/\.expbench-review\./, said);
    assert.doesNotMatch(await frame.locator('body').innerText(), /\/(tmp|work)\//, 'no machine path in the view');
    const rows = frame.locator('table tbody tr');
    assert.equal(await rows.count(), 2);
    const design = (await rows.nth(0).innerText()).replace(/\s+/g, ' ');
    assert.match(design, /28 4 0\.\d\d \[0\.\d\d, 1\.00\]/);
    assert.equal(await frame.locator('svg.plot circle.kappa').count(), 3, 'one κ per row and one in the legend');
    assert.ok(fs.statSync(await wb.screenshot('21-agreement-view')).size > 10_000);
    fs.copyFileSync(path.join(wb.screenshotsDir, '21-agreement-view.png'), path.join(repoRoot, 'docs', 'images', '21-agreement-view.png'));
  });
});
