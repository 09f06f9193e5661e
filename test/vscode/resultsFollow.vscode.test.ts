// The Results view follows its folder even when no file-watcher event comes (VS Code's watcher of a
// folder outside the workspace can miss or drop events): the panel is made with no watcher at all,
// so only its stat re-check can see a judge file copied in, and the figures must still update.
// Input: the real reference-harness output (shared/data/trajectories/exp-bench), copied file by file.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ResultsHostMessage } from '../../src/protocol/results';
import { ResultsPanel } from '../../src/extension/results/resultsPanel';
import { EXTENSION_ID } from './extensionApi';

const HARNESS = path.resolve(__dirname, '../../..', '..', 'shared', 'data', 'trajectories', 'exp-bench', 'Just-Curieous__Curie', 'azure-gpt-4o');

/** Memento of one test (the followed folder is chosen through it). */
class Memory implements vscode.Memento {
  private readonly m = new Map<string, unknown>();
  keys(): readonly string[] { return [...this.m.keys()]; }
  get<T>(key: string, fallback?: T): T | undefined { return (this.m.has(key) ? this.m.get(key) : fallback) as T | undefined; }
  async update(key: string, value: unknown): Promise<void> { if (value === undefined) this.m.delete(key); else this.m.set(key, value); }
}

/** Resolves with the first message posted that `ok` accepts, rejects after `ms` naming `what` and the last message. */
function posted(panel: ResultsPanel, ok: (m: ResultsHostMessage) => boolean, what: string, ms: number): Promise<ResultsHostMessage> {
  return new Promise((resolve, reject) => {
    let last: ResultsHostMessage | undefined;
    const timer = setTimeout(() => { sub.dispose(); reject(new Error(`timed out after ${ms} ms waiting for ${what}; last message ${JSON.stringify(last)?.slice(0, 300)}`)); }, ms);
    const sub = panel.onDidPost((m) => { last = m; if (ok(m)) { clearTimeout(timer); sub.dispose(); resolve(m); } });
  });
}

const runs = (m: ResultsHostMessage | undefined): number => (m?.type === 'results' ? Object.keys(m.runs).length : -1);

async function copyRun(to: string, index: number): Promise<void> {
  for (const suffix of ['eval_gen.json', 'eval_gen_config_config.json', 'eval_judge.json']) {
    const name = `93022_task_index_${index}_iter_1_duration_0.67_${suffix}`;
    await fsp.copyFile(path.join(HARNESS, name), path.join(to, `.${name}.tmp`));
    await fsp.rename(path.join(to, `.${name}.tmp`), path.join(to, name));
  }
}

describe('Results view: following the folder without watcher events (real extension host)', function () {
  this.timeout(120_000);
  let tmp: string;
  let panel: ResultsPanel;

  before(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-results-follow-'));
  });
  after(async () => {
    panel?.dispose();
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('a harness judge file copied in joins the figures through the re-check alone, and the view says when it checked', async () => {
    const dir = path.join(tmp, 'harness', 'Just-Curieous__Curie', 'azure-gpt-4o');
    await fsp.mkdir(dir, { recursive: true });
    await copyRun(dir, 0);
    await copyRun(dir, 1);
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, 'extension not found');
    const state = new Memory();
    panel = new ResultsPanel(ext.extensionUri, { tasks: async () => [], defaultDir: () => path.join(tmp, 'harness'), state, openRuns: async () => undefined, watch: false, recheckMs: 250 });
    // the webview's `ready` computes the figures (the path a user's panel takes)
    const first = posted(panel, (m) => m.type === 'results', 'the first figures', 60_000);
    panel.show();
    assert.equal(runs(await first), 2, `two judged runs at first: ${JSON.stringify(panel.posted)?.slice(0, 300)}`);
    const checked = await posted(panel, (m) => m.type === 'checked', 'a re-check of the folder', 20_000);
    assert.ok(checked.type === 'checked' && Math.abs(Date.parse(checked.at) - Date.now()) < 20_000 && checked.everyS === 0.3, JSON.stringify(checked));
    // no change: re-checks come, the figures are not computed again
    let computed = 0;
    const sub = panel.onDidPost((m) => { if (m.type !== 'checked') computed++; });
    await posted(panel, (m) => m.type === 'checked', 'a second re-check', 20_000);
    await posted(panel, (m) => m.type === 'checked', 'a third re-check', 20_000);
    sub.dispose();
    assert.equal(computed, 0, 'an unchanged folder is not read again');
    // a judged run copied in: no watcher exists, the re-check alone must see it
    const grown = posted(panel, (m) => runs(m) === 3, 'the third judged run in the figures', 30_000);
    await copyRun(dir, 2);
    await grown;
  });
});
