// Smoke test of the e2e tier: a user opens the EXP-Bench view in the real workbench (code-server
// in headless Chromium), expands the Tasks tree to a real EXP-Bench task, opens its brief from the
// context menu and reads the question in the webview. The expected text is read straight from the
// task file, not through the extension's loader.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getWorkbench } from '../harness/e2e-context';
import { sharedDatasetDir } from '../harness/paths';

const CONFERENCE = 'iclr2024';
const PAPER_ID = '17388'; // AgentBench: Evaluating LLMs as Agents
const INDEX = 0;

function firstSentence(question: string): string {
  return question.replace(/\s+/g, ' ').trim().split(/(?<=[?.])\s/)[0];
}

describe('task brief (end to end)', () => {
  let question: string;

  before(() => {
    const dir = path.join(sharedDatasetDir, 'tasks', CONFERENCE, PAPER_ID);
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.json'));
    assert.ok(file, `no task file in ${dir}`);
    const raw = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { questions: { question: string }[] };
    question = raw.questions[INDEX].question;
    assert.ok(question.length > 20);
  });

  it(`shows the question of ${CONFERENCE}/${PAPER_ID}/${INDEX} in its brief webview`, async () => {
    const wb = getWorkbench();
    await wb.openViewContainer('EXP-Bench');
    const task = await wb.revealTreePath([new RegExp(`^${CONFERENCE}$`), new RegExp(`^${PAPER_ID}\\b`), new RegExp(`^${INDEX} · T\\d`)]);
    const label = await task.locator('.label-name').innerText();
    assert.match(label, new RegExp(`^${INDEX} · T[123]\\b.*: Do API-based LLMs`), `tree label was ${JSON.stringify(label)}`);

    await wb.contextMenu(task, /Show Task Brief/);
    const frame = await wb.webviewFrame(`Brief ${CONFERENCE}/${PAPER_ID}/${INDEX}`);
    const sentence = firstSentence(question);
    await wb.waitForText(sentence, frame);
    const text = (await frame.locator('body').innerText()).replace(/\s+/g, ' ');
    assert.ok(text.includes(sentence), `the brief does not contain ${JSON.stringify(sentence)}`);
    assert.ok(text.includes('AgentBench: Evaluating LLMs as Agents'), 'the brief does not show the paper title');

    const shot = await wb.screenshot(`brief-${CONFERENCE}-${PAPER_ID}-${INDEX}`);
    assert.ok(fs.statSync(shot).size > 10_000, `screenshot ${shot} is suspiciously small`);
  });
});
