// The repository at a step inside the real extension host: a session the test builds (a real git
// workspace with "task start", an event log whose file.edited diffs are jsdiff patches, a watcher's
// file.changed with no content) opened at steps with `expbench.trajectory.openRepositoryAtStep`,
// `expbench.trajectory.showStepDiff` and `expbench.trajectory.compareSteps`; what they open is read
// back from the editor's tabs and the read-only documents.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPatch } from 'diff';
import * as vscode from 'vscode';
import type { OpenedRepository } from '../../src/extension/trajectory/repoAtStep';
import { commit, initRepo } from '../fixtures/repos/build';
import { adoptWorkspace } from '../fixtures/hostRepo';
import { api } from './extensionApi';

const TRAIN0 = 'import sys\nprint("accuracy 0.50")\n# end\n';
const TRAIN1 = 'import sys\nprint("accuracy 0.91")\n# end\n';
const SCRIPT = '#!/usr/bin/env bash\npython3 train.py\n';

async function until<T>(what: string, get: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; tabs: ${JSON.stringify(vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => [t.label, t.isActive, t.input?.constructor?.name])))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const activeTab = () => vscode.window.tabGroups.activeTabGroup.activeTab;

describe('Repository at a step (real extension host)', function () {
  this.timeout(120_000);
  let tmp: string;
  let session: string;

  before(async () => {
    await api();
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-repo-vscode-'));
    session = path.join(tmp, 'session');
    const ws = path.join(session, 'workspace');
    await initRepo(ws);
    await commit(ws, 'task start', { 'train.py': TRAIN0, 'README.md': 'toy\n' });
    adoptWorkspace(session);
    await fsp.mkdir(path.join(session, 'private'), { recursive: true });
    const t0 = Date.parse('2026-12-01T11:00:00Z');
    const ev = (dt: number, e: object) => JSON.stringify({ v: 1, at: new Date(t0 + dt).toISOString(), ...e });
    await fsp.writeFile(path.join(session, 'private', 'events.jsonl'), [
      ev(0, { type: 'session.opened', client: 'vscode', restored: false }),                                        // 0
      ev(1000, { type: 'file.edited', path: 'train.py', diff: createPatch('train.py', TRAIN0, TRAIN1) }),          // 1
      ev(6000, { type: 'file.edited', path: 'reproduce_exp_bench.sh', diff: createPatch('reproduce_exp_bench.sh', '', SCRIPT) }), // 2
      ev(20000, { type: 'file.changed', path: 'README.md', bytes: 9 }),                                            // 3: no content
      ev(30000, { type: 'note.added', text: 'done' }),                                                              // 4
    ].join('\n') + '\n');
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('openRepositoryAtStep: the changed files against the prepared workspace in the multi-file diff editor, read-only; a quick pick of the tree', async () => {
    const r = await vscode.commands.executeCommand<OpenedRepository>('expbench.trajectory.openRepositoryAtStep', { uri: session, step: 2 });
    assert.ok(r, 'the command answered');
    assert.deepEqual(r.changed, [{ path: 'reproduce_exp_bench.sh', status: 'added' }, { path: 'train.py', status: 'modified' }]);
    assert.equal(r.approximate, false);
    assert.equal(r.files, 3);
    assert.equal(r.title, 'session at step 2');
    const tab = await until('the multi-file diff editor', () => activeTab()?.label === `${r.title} (2 files)` && activeTab());
    assert.ok(tab);
    // The quick pick of the tree's files is open; its items are the tree's files.
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    // The right sides are read-only documents of the tree at step 2.
    // Both sides of train.py: one tab path, the prepared file on the left, the tree's on the right.
    const sides = await until('both documents of train.py', () => {
      const docs = vscode.workspace.textDocuments.filter((d) => d.uri.scheme === 'expbench-step' && d.uri.path === '/step 2/train.py');
      return docs.length >= 2 && docs;
    });
    assert.deepEqual(sides.map((d) => d.getText()).sort(), [TRAIN0, TRAIN1].sort());
    const doc = sides.find((d) => d.getText() === TRAIN1)!;
    await assert.rejects(Promise.resolve(vscode.workspace.fs.writeFile(doc.uri, Buffer.from('x'))), 'the scheme has no file system: nothing can be written back');
    assert.equal(await fsp.readFile(path.join(session, 'workspace', 'train.py'), 'utf8'), TRAIN0, 'the session workspace is untouched');
  });

  it('openRepositoryAtStep after a content-less change says "approximate from step 3" in its title', async () => {
    const r = await vscode.commands.executeCommand<OpenedRepository>('expbench.trajectory.openRepositoryAtStep', { uri: path.join(session, 'private', 'events.jsonl'), step: 4, pick: false });
    assert.equal(r.approximate, true);
    assert.equal(r.approximateFrom, 3);
    assert.equal(r.title, 'session at step 4 — approximate from step 3');
    await until('the approximate title on the tab', () => activeTab()?.label === `${r.title} (2 files)`);
  });

  it('showStepDiff: the one file the step edited, before ↔ after, in a diff editor', async () => {
    const r = await vscode.commands.executeCommand<{ files: string[]; title: string }>('expbench.trajectory.showStepDiff', { uri: session, step: 1 });
    assert.deepEqual(r.files, ['train.py']);
    const tab = await until('the diff tab', () => (activeTab()?.input instanceof vscode.TabInputTextDiff ? activeTab() : undefined));
    const input = tab.input as vscode.TabInputTextDiff;
    assert.equal(tab.label, `train.py: ${r.title}`);
    assert.equal((await vscode.workspace.openTextDocument(input.original)).getText(), TRAIN0);
    assert.equal((await vscode.workspace.openTextDocument(input.modified)).getText(), TRAIN1);
    assert.equal(input.modified.scheme, 'expbench-step');
    const none = await vscode.commands.executeCommand<{ files: string[] }>('expbench.trajectory.showStepDiff', { uri: session, step: 0 });
    assert.deepEqual(none.files, [], 'session.opened edits nothing');
  });

  it('compareSteps: the tree at one step against another (git diff --no-index of the two)', async () => {
    const r = await vscode.commands.executeCommand<{ files: Array<{ path: string; status: string }>; diff: string }>('expbench.trajectory.compareSteps', { uri: session, step: 2, other: 1 });
    assert.deepEqual(r.files, [{ path: 'reproduce_exp_bench.sh', status: 'added' }]);
    assert.match(r.diff, /^\+python3 train\.py$/m);
    const tab = await until('the diff tab of the comparison', () => (activeTab()?.input instanceof vscode.TabInputTextDiff ? activeTab() : undefined));
    assert.equal(tab.label, 'reproduce_exp_bench.sh: session: step 1 ↔ step 2');
    assert.equal(await vscode.commands.executeCommand('expbench.trajectory.compareSteps', { uri: session, step: 99, other: 1 }), undefined, 'a step beyond the end is an error message, not a throw');
  });
});
