// The curator's desk end to end (issue 31's must-show) in the real workbench (code-server in
// headless Chromium): a curator's folder whose datasets are the shared EXP-Bench tasks and the
// sample task in a paper folder whose curation file pins a git repository built here (at the pin
// the sample's reference `toycal/metrics.py:19-33` runs past the file's 31 lines: a lint error);
// a judged session of the sample (test/harness/agreementSessions.ts, the real core functions) in
// the sessions folder; and, as two curators' files merged through git would bring them, two
// disagreeing verdicts and a dispute on shared tasks. The curator opens the queue, narrows it by
// rule, opens the task with the lint error, records "needs fix" with a reason, edits one
// requirement's reference in the scratch copy (saved: the diff, the reason asked for), sees the
// judged session affected, re-judges it, and exports: the exported task carries the edit and the
// review store the verdict with who and why. Screenshots: 31-curation-queue, 31-task-page.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReviewStore } from '../../src/core/review';
import { agreementVariants, buildAgreementSession, SAMPLE_TASK_ID } from '../harness/agreementSessions';
import { paperRepo, writePaper } from '../harness/curationFixture';
import { getWorkbench } from '../harness/e2e-context';
import { repoRoot, sharedDatasetDir, testResultsDir } from '../harness/paths';
import { answerInputBox } from '../harness/quickInput';

const REASON = 'requirement 5 cites toycal/metrics.py:19-33, the file has 31 lines at the pin';
const EDIT_REASON = 'ece() ends at line 31 of toycal/metrics.py at the pin';

function judgementsUnder(dir: string): Array<Record<string, any>> {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => JSON.parse(fs.readFileSync(path.join(e.parentPath, e.name), 'utf8')));
}

describe('curator\'s desk: queue, task page, verdict, edit, affected sessions, export (end to end)', function () {
  this.timeout(600_000);
  let tmp: string;
  let folder: string;
  let ds: string;
  let session: string;
  const review = () => {
    const d = process.env.EXPBENCH_E2E_REVIEW_DIR;
    if (!d) throw new Error('EXPBENCH_E2E_REVIEW_DIR is not set: run through run-e2e.js');
    return d;
  };

  before(async () => {
    tmp = path.join(testResultsDir, 'e2e-sessions', `desk-${process.pid}-${Date.now()}`);
    const repo = await paperRepo(path.join(tmp, 'toy-calibration'), path.join(repoRoot, 'samples', 'repos', 'toy-calibration'));
    const pin = await repo.commit({}, 'the pin');
    ds = path.join(tmp, 'ds');
    await writePaper(ds, 'sample/toycal', {
      taskFile: path.join(repoRoot, 'samples', 'exp-bench', 'tasks', 'sample', 'toycal', 'toycal_complete_final.json'),
      curation: { version: 1, paper: 'sample/toycal', repository: { url: repo.dir, commit: pin }, environment: { baseImage: 'expbench/sandbox:1' } },
    });
    const sessions = path.join(tmp, 'sessions');
    fs.mkdirSync(sessions, { recursive: true });
    const partial = (await agreementVariants()).find((v) => v.name === 'B-partial')!;
    session = (await buildAgreementSession(sessions, path.join(tmp, 'cache'), partial)).root;
    // two curators' verdicts and a baseliner's dispute, as a git merge of their stores brings them
    const store = new ReviewStore(review());
    await store.add({ subject: { kind: 'task', task: 'iclr2024/17595/1' }, kind: 'task-verdict', value: 'valid', reason: 'the scripts are there', by: 'curator-a@example.org' });
    await store.add({ subject: { kind: 'task', task: 'iclr2024/17595/1' }, kind: 'task-verdict', value: 'needs-fix', reason: 'range :115-114 is reversed', by: 'curator-b@example.org' });
    await store.add({ subject: { kind: 'task', task: 'iclr2024/19610/5' }, kind: 'dispute', value: { about: 'requirements', evidence: [] }, reason: 'a reference names usage_instructions, not a file', by: 'baseliner@example.org' });
    folder = path.join(tmp, 'curator');
    fs.mkdirSync(path.join(folder, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify({
      'expbench.datasets': [sharedDatasetDir, ds], 'expbench.showSample': false, 'expbench.sessionsDir': sessions, 'workbench.startupEditor': 'none',
    }));
    const wb = getWorkbench();
    await wb.openFolder(folder);
    await wb.trustWorkspace(); // the curator's own folder: its expbench.datasets and sessionsDir apply once trusted (docs/trust.md)
    // the window's extensions registered (the EXP-Bench view container is contributed by this extension)
    await wb.page.locator('.part.activitybar').getByRole('tab', { name: /^EXP-Bench\b/ }).first().waitFor({ state: 'visible', timeout: 180_000 });
  });

  after(async () => {
    const wb = getWorkbench();
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('opens the queue with its counts, narrows it by rule, and opens the task with the lint error', async () => {
    const wb = getWorkbench();
    await wb.runCommand('EXP-Bench: Show Curation Queue (Curator)');
    const q = await wb.webviewFrame('Curation: Queue');
    const row = q.locator(`#desk-queue tr[data-task="${SAMPLE_TASK_ID}"]`);
    await row.waitFor({ state: 'visible', timeout: 180_000 }); // the lint clones the pin into the pristine cache first
    assert.match(await row.innerText(), /lint error/);
    const counts = (await q.locator('#desk-counts').innerText()).replace(/\s+/g, ' ');
    // 395 shared tasks and the sample: none has a verdict but the two the curators disagree on
    assert.match(counts, /needs a curator 396/);
    assert.match(counts, /lint error 1 /);
    assert.match(counts, /open dispute 1 /);
    assert.match(counts, /curators disagree 1 /);
    assert.match(counts, /all tasks 396/);
    const disagree = q.locator('#desk-queue tr[data-task="iclr2024/17595/1"]');
    assert.match((await disagree.innerText()).replace(/\s+/g, ' '), /curators disagree .*curator-a@example\.org: valid; curator-b@example\.org: needs fix/);
    assert.match(await q.locator('#desk-curators').innerText(), /curator-a@example\.org and curator-b@example\.org: 0 of 1 tasks agree/);
    const shot = await wb.screenshot('31-curation-queue');
    fs.copyFileSync(shot, path.join(repoRoot, 'docs', 'images', '31-curation-queue.png'));
    await q.locator('#desk-rule').selectOption('ref-range-past-end');
    await q.locator('#desk-shown', { hasText: '1 of 396 tasks shown' }).waitFor({ state: 'visible', timeout: wb.timeoutMs });
    assert.equal(await q.locator('#desk-queue tbody tr').count(), 1);
    await q.locator(`#desk-queue tr[data-task="${SAMPLE_TASK_ID}"]`).click();
    const page = await wb.webviewFrame(`Curate ${SAMPLE_TASK_ID}`);
    const f = page.locator('#desk-lint .finding[data-rule="ref-range-past-end"]');
    await f.waitFor({ state: 'visible', timeout: wb.timeoutMs });
    assert.match(await f.innerText(), /toycal\/metrics\.py:19-33/);
    assert.match(await page.locator('#desk-sessions').innerText(), /Judged sessions \(1; 0 affected by the edits\)/);
  });

  it('records "needs fix" with a reason: the page shows who and why, the store holds it', async () => {
    const wb = getWorkbench();
    const page = await wb.webviewFrame(`Curate ${SAMPLE_TASK_ID}`);
    await page.locator('#desk-reason').fill(REASON);
    await page.locator('button[data-verdict="needs-fix"]').click();
    await page.locator('#desk-verdict', { hasText: 'Verdict: needs fix' }).waitFor({ state: 'visible', timeout: wb.timeoutMs });
    assert.match(await page.locator('#desk-verdict').innerText(), new RegExp(`— .+: ${REASON.replace(/[.:]/g, '.')}`));
    assert.match((await page.locator('#desk-history tbody tr').first().innerText()).replace(/\s+/g, ' '), /task-verdict needs-fix/);
    const mine = judgementsUnder(review()).filter((j) => j.kind === 'task-verdict' && j.subject.task === SAMPLE_TASK_ID);
    assert.equal(mine.length, 1);
    assert.equal(mine[0].value, 'needs-fix');
    assert.equal(mine[0].reason, REASON);
    assert.ok(typeof mine[0].by === 'string' && mine[0].by.length > 0);
  });

  it('edits one requirement\'s reference in the scratch copy: a diff, a reason, the affected session, a re-judge', async () => {
    const wb = getWorkbench();
    const page = await wb.webviewFrame(`Curate ${SAMPLE_TASK_ID}`);
    await page.locator('#desk-edit').click();
    await wb.page.locator('.part.editor .tab.active .label-name', { hasText: 'sample_toycal_0.json' }).waitFor({ state: 'visible', timeout: wb.timeoutMs });
    const entry = JSON.parse(fs.readFileSync(path.join(repoRoot, 'samples', 'exp-bench', 'tasks', 'sample', 'toycal', 'toycal_complete_final.json'), 'utf8')).questions[0];
    entry.requirements[4] = entry.requirements[4].replace('/workspace/toycal/metrics.py:19-33', '/workspace/toycal/metrics.py:19-31');
    await wb.replaceActiveEditorText(`${JSON.stringify(entry, null, 2)}\n`);
    // the diff beside, then the reason
    await wb.page.locator('.quick-input-widget .quick-input-title', { hasText: `Reason for the edit of ${SAMPLE_TASK_ID} (replace /requirements/4)` }).waitFor({ state: 'visible', timeout: wb.timeoutMs });
    await wb.page.locator('.part.editor .tab .label-name', { hasText: /the edit \(before ↔ saved/ }).first().waitFor({ state: 'visible', timeout: wb.timeoutMs });
    await answerInputBox(wb, new RegExp(`^Reason for the edit of ${SAMPLE_TASK_ID} \\(replace /requirements/4\\)`), EDIT_REASON);
    // the desk brings the task page back; one editor column and no side bar for the screenshot
    await wb.page.locator('.notifications-toasts .notification-toast', { hasText: `the edit of ${SAMPLE_TASK_ID} affects 1 judged session` }).waitFor({ state: 'visible', timeout: wb.timeoutMs });
    await wb.runCommand('View: Single Column Editor Layout');
    await wb.page.locator('.part.editor .tab .label-name', { hasText: `Curate ${SAMPLE_TASK_ID}` }).first().click();
    if (await wb.page.locator('.part.sidebar').isVisible()) await wb.runCommand('View: Toggle Primary Side Bar Visibility');
    const back = await wb.webviewFrame(`Curate ${SAMPLE_TASK_ID}`);
    const edit = back.locator('#desk-edits .edit');
    await edit.waitFor({ state: 'visible', timeout: wb.timeoutMs });
    assert.match((await edit.innerText()).replace(/\s+/g, ' '), /replace \/requirements\/4: ".*19-33\)" → ".*19-31\)"/);
    assert.match(await back.locator('#desk-requirements').innerText(), /metrics\.py:19-31/);
    const affected = back.locator(`#desk-sessions .session.affected[data-session="${session}"]`);
    await affected.waitFor({ state: 'visible', timeout: wb.timeoutMs });
    assert.match(await affected.innerText(), /judged with other requirements/);
    await wb.runCommand('Notifications: Clear All Notifications');
    await back.locator('.page-head').evaluate((e) => e.scrollIntoView({ block: 'start' }));
    const shot = await wb.screenshot('31-task-page');
    fs.copyFileSync(shot, path.join(repoRoot, 'docs', 'images', '31-task-page.png'));
    await back.locator('#desk-rejudge').click();
    await back.locator('#desk-notice', { hasText: /1 session re-judged by the heuristic judge/ }).waitFor({ state: 'visible', timeout: 120_000 });
    await back.locator('#desk-sessions h2', { hasText: 'Judged sessions (1; 0 affected by the edits)' }).waitFor({ state: 'visible', timeout: wb.timeoutMs });
    await wb.runCommand('View: Toggle Primary Side Bar Visibility');
    const curated = JSON.parse(fs.readFileSync(path.join(session, 'private', 'judge', 'curated-task.json'), 'utf8'));
    assert.match(curated.raw.requirements[4], /metrics\.py:19-31/);
  });

  it('exports: the exported task carries the edit, the review store the verdict with who and why', async () => {
    const store = judgementsUnder(review());
    const edit = store.find((j) => j.kind === 'task-edit' && j.subject.task === SAMPLE_TASK_ID);
    assert.ok(edit, 'the edit is in the review store');
    assert.equal(edit.reason, EDIT_REASON);
    assert.deepEqual(edit.value.patch.map((o: { op: string; path: string }) => `${o.op} ${o.path}`), ['replace /requirements/4']);
    // the task file itself is never changed
    assert.match(fs.readFileSync(path.join(ds, 'tasks', 'sample', 'toycal', 'toycal_complete_final.json'), 'utf8'), /metrics\.py:19-33/);
    const out = path.join(tmp, 'export');
    execFileSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'curate', 'export', ds, '--no-sample', '--review', review(), '--out', out], { stdio: 'pipe' });
    const exported = JSON.parse(fs.readFileSync(path.join(out, 'tasks', 'sample', 'toycal', 'toycal_complete_final.json'), 'utf8'));
    assert.match(exported.questions[0].requirements[4], /metrics\.py:19-31\)$/);
    const manifest = fs.readFileSync(path.join(out, 'curated-manifest.jsonc'), 'utf8');
    const m = JSON.parse(manifest.replace(/^\s*\/\/.*$/gm, ''));
    const t = m.tasks.find((x: { id: string }) => x.id === SAMPLE_TASK_ID);
    assert.equal(t.verdict, 'needs-fix');
    assert.equal(t.reason, REASON);
    assert.equal(t.edits.length, 1);
    assert.equal(t.edits[0].reason, EDIT_REASON);
    assert.ok(t.decidedBy.length > 0);
  });
});
