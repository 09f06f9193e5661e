// Issue 30 end to end (code-server in headless Chromium): three real runs read as a reviewer reads
// them. An Inspect .eval (METR's class-eval, 5 samples): agent, model and task in the header, the
// log's own token total, the sample list with scores, the scoring view, spans nested as Inspect
// nests them (init, solvers › generate, scorers › class_eval_scorer) with the scorer's work
// labelled scoring, the reasoning as its own collapsed block (redacted by the provider, with its
// summary). An OpenHands V0 run: the log's metrics total, the instruction as the task, an edit as a
// diff, the final git_patch as its own step. A SWE-agent 1.x run: the issue text as the task, the
// windowed edit as a diff, the submission; repository actions not offered, with the reason.
// Screenshots: docs/images/30-inspect-run.png, 30-openhands-run.png, 30-swe-agent-run.png,
// 30-swe-agent-submission.png (looked at; no machine paths in them).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';
import { usageTotals } from '../../src/core/viewer/usage';
import { getWorkbench } from '../harness/e2e-context';
import { viewerFrame } from '../harness/viewerFrame';
import { repoRoot, testResultsDir } from '../harness/paths';
import type { Workbench } from '../harness/workbench';

const DATA = path.resolve(repoRoot, '..', 'shared', 'data', 'trajectories');
const INSPECT = path.join(DATA, 'inspect-eval/METR__inspect-action/2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval');
const OPENHANDS = path.join(DATA, 'openhands-v0/OpenHands__OpenHands/output.jsonl');
const SWE = path.join(DATA, 'swe-agent/SWE-agent__SWE-agent/6e44b9__sweagenttestrepo-1c2844.traj');
const IMAGES = path.join(repoRoot, 'docs', 'images');

async function load(file: string): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  await importFiles([file], (t) => { out.push(t); });
  return out;
}

async function mustShow(wb: Workbench, name: string): Promise<void> {
  await wb.dismissHovers();
  const file = path.join(IMAGES, `${name}.png`);
  await wb.page.screenshot({ path: file });
  const size = fs.statSync(file).size;
  assert.ok(size > 20_000 && size < 1_500_000, `screenshot ${file} is ${size} bytes`);
}

async function openAsTrajectory(wb: Workbench, name: string): Promise<Frame> {
  await wb.page.keyboard.press('Control+Shift+E');
  for (let attempt = 1; ; attempt++) {
    const item = await wb.treeItem(name);
    try { await wb.contextMenu(item, 'Open as Trajectory'); break; } catch (e) {
      await wb.page.keyboard.press('Escape');
      if (attempt === 4) throw e;
      await wb.page.locator('.monaco-menu').waitFor({ state: 'hidden', timeout: 5000 }).catch(() => undefined);
    }
  }
  return viewerFrame(wb, name);
}

async function select(f: Frame, step: number): Promise<void> {
  const row = f.locator(`.row[data-step="${step}"]`);
  if (!(await row.isVisible().catch(() => false))) {
    // far down the list: Go to Step through the host, as `g` does
    await f.evaluate((s) => window.postMessage({ type: 'select', step: s }, '*'), step);
  } else await row.click();
  await f.locator(`.detail-body[data-step="${step}"]`).waitFor({ state: 'visible', timeout: 30_000 });
}

describe('issue 30: runs read as their own viewers show them (end to end)', function () {
  this.timeout(300_000);
  let wb: Workbench;
  let folder: string;

  before(async () => {
    wb = getWorkbench();
    folder = path.join(testResultsDir, 'e2e-viewer-runs', 'runs');
    fs.rmSync(folder, { recursive: true, force: true });
    fs.mkdirSync(folder, { recursive: true });
    for (const f of [INSPECT, OPENHANDS, SWE]) fs.copyFileSync(f, path.join(folder, path.basename(f)));
    fs.mkdirSync(IMAGES, { recursive: true });
    await wb.openFolder(folder);
  });

  after(async () => {
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(folder, { recursive: true, force: true });
  });

  it('an Inspect run: agent, model, task; the log\'s total; samples with scores; nested spans; the scorer\'s work apart; reasoning in its own block', async () => {
    const list = await load(INSPECT);
    const f = await openAsTrajectory(wb, path.basename(INSPECT));
    const head = (await f.locator('.head').innerText()).replace(/\s+/g, ' ');
    const shown = list.find((t) => new RegExp(` ${t.id} `).test(head))!;
    assert.ok(shown, head);
    assert.match(head, /agent system_message → generate · model openai\/gpt-5-nano/);
    assert.match(head, /task inspect_evals\/class_eval/);
    // the header's total is the sample's own model_usage, its reasoning counted
    const u = usageTotals(shown);
    assert.match(head, new RegExp(`\\(sample model_usage\\): input ${u.inputTokens.toLocaleString('en')} · output ${u.outputTokens.toLocaleString('en')} .* reasoning ${u.reasoningTokens.toLocaleString('en')}`));
    // the sample list: every sample with its id, status and scores
    await f.locator('button.tab[data-panel="samples"]').click();
    const rows = f.locator('.panel table.samples-list tbody tr');
    await rows.first().waitFor({ state: 'visible', timeout: 30_000 });
    assert.equal(await rows.count(), 5);
    const table = await f.locator('.panel table.samples-list').innerText();
    for (const t of list) assert.match(table, new RegExp(t.id));
    assert.match(table, /class_eval_scorer [CI]/);
    // spans: the first rows open init, then solvers › generate, then scorers › class_eval_scorer; the scorer's rows are scoring, not a phase
    const spans = (await f.locator('.row .text .span').allInnerTexts()).join(' | ');
    assert.match(spans, /▸ init/);
    assert.match(spans, /▸ solvers › generate/);
    assert.match(spans, /▸ scorers › class_eval_scorer/);
    const scoring = f.locator('.row.harness.stage-scoring');
    assert.ok(await scoring.count() >= 1);
    assert.match(await scoring.first().locator('.band').innerText(), /scoring/i);
    // the model step: its reply, and the reasoning apart, collapsed, said to be redacted by the provider with its summary
    const model = shown.steps.find((s) => s.kind === 'model' && s.reasoning)!;
    assert.ok(model, 'the class-eval sample has a model step with reasoning');
    await select(f, model.index);
    const block = f.locator(`.detail-body[data-step="${model.index}"] details.reasoning`);
    assert.equal(await block.getAttribute('open'), null, 'collapsed by default');
    assert.match(await block.locator('summary').innerText(), /Reasoning: redacted by the provider \(encrypted\), its summary/);
    await block.locator('summary').click();
    await block.locator('pre').first().waitFor({ state: 'visible', timeout: 10_000 });
    assert.match(await f.locator(`.detail-body[data-step="${model.index}"]`).innerText(), /Reply/);
    await mustShow(wb, '30-inspect-run');
    // the scoring view: value, answer, explanation; the target (a researcher's viewer)
    await f.locator('button.tab[data-panel="scores"]').click();
    const scores = await f.locator('.panel table.scores').innerText();
    assert.match(scores, /class_eval_scorer/);
    assert.match(scores, /The following code was executed/);
  });

  it('an OpenHands run: the metrics total, the instruction, an edit as a diff, the git_patch as the submission', async () => {
    const list = await load(OPENHANDS);
    const f = await openAsTrajectory(wb, path.basename(OPENHANDS));
    const t = list.find((x) => x.id === 'ponylang__ponyc-4588')!;
    await f.locator('select.samples').selectOption(String(list.indexOf(t)));
    // the header redrawn for that sample: its id in the title and its step count in the counts line (the sample menu names every sample's count, so the count alone proves nothing)
    await f.waitForFunction(([id, n]) => {
      const h = (document.querySelector('main.traj .head') as HTMLElement | null)?.innerText.replace(/\s+/g, ' ') ?? '';
      return h.includes(` · ${id} · task `) && h.includes(` ${n} steps · `);
    }, [t.id, String(t.steps.length)] as const, { timeout: 30_000 });
    const head = (await f.locator('.head').innerText()).replace(/\s+/g, ' ');
    assert.match(head, /agent CodeActAgent · model openai\/openrouter-llama-4-maverick/);
    assert.match(head, /943,642|943\.6k tokens \(metrics\.accumulated_token_usage\)/);
    // the task (the instruction) is the first user message, a TASK row
    const task = t.steps.find((s) => s.purpose === 'task')!;
    assert.match(await f.locator(`.row[data-step="${task.index}"] .band`).innerText(), /task/i);
    const edit = t.steps.find((s) => s.edits?.some((e) => e.before !== undefined && e.after !== undefined))!;
    await select(f, edit.index);
    const diff = f.locator(`.detail-body[data-step="${edit.index}"] section.edit pre.diff`).first();
    await diff.waitFor({ state: 'visible', timeout: 30_000 });
    assert.ok(await diff.locator('.dl.add').count() > 0 && await diff.locator('.dl.del').count() > 0);
    await f.locator(`.detail-body[data-step="${edit.index}"] section.edit`).first().scrollIntoViewIfNeeded();
    await mustShow(wb, '30-openhands-run');
    const sub = t.steps.find((s) => s.purpose === 'submission')!;
    assert.equal(sub.index, t.steps.length - 1);
    await select(f, sub.index);
    assert.ok(await f.locator(`.detail-body[data-step="${sub.index}"] section.edit pre.diff .dl.add`).count() > 0, 'the final patch as a diff');
  });

  it('a SWE-agent run: the issue as the task, the edit as a diff, the submission; no repository actions, and why', async () => {
    const [t] = await load(SWE);
    const f = await openAsTrajectory(wb, path.basename(SWE));
    await f.locator('button.tab[data-panel="task"]').click();
    const taskText = await f.locator('.panel pre.task-text').innerText();
    assert.match(taskText, /SyntaxError: invalid syntax/);
    const edit = t.steps.find((s) => s.edits?.length && !s.purpose)!;
    await select(f, edit.index);
    const detail = f.locator(`.detail-body[data-step="${edit.index}"]`);
    assert.ok(await detail.locator('section.edit pre.diff .dl.add').count() > 0);
    assert.ok(await detail.locator('section.edit pre.diff .dl.del').count() > 0);
    // the action once: the tool and its arguments as text (the command line is that call written out: not repeated)
    const action = await detail.locator('.block.action pre').innerText();
    assert.match(action, /^edit\nsearch: def division\(a: float, b: float\) -> float\nreplace: def division\(a: float, b: float\) -> float:/);
    assert.doesNotMatch(action, /\$ edit/);
    assert.equal(await detail.getByRole('button', { name: 'Show diff' }).count(), 0);
    assert.match(await detail.locator('.why').innerText(), /names no EXP-Bench task/);
    await detail.locator('section.edit').first().scrollIntoViewIfNeeded();
    await mustShow(wb, '30-swe-agent-run');
    await f.locator('button.tab[data-panel="task"]').click();
    await f.locator('.panel.open').waitFor({ state: 'hidden', timeout: 10_000 });
    const sub = t.steps.find((s) => s.purpose === 'submission')!;
    await select(f, sub.index);
    assert.match(await f.locator(`.row[data-step="${sub.index}"] .band`).innerText(), /submission/i);
    assert.ok(await f.locator(`.detail-body[data-step="${sub.index}"] section.edit pre.diff .dl.add`).count() > 0);
    await mustShow(wb, '30-swe-agent-submission');
    fs.writeFileSync(path.join(testResultsDir, 'e2e-viewer-runs.json'), JSON.stringify({ ok: true }));
  });
});
