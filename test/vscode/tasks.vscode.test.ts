import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api } from './extensionApi';
import type { TaskNode } from '../../src/extension/taskTree';

function label(item: vscode.TreeItem): string {
  return typeof item.label === 'string' ? item.label : item.label?.label ?? '';
}

describe('Tasks tree (real extension host)', function () {
  this.timeout(60_000);

  it('shows conference → paper → task from expbench.datasets and the bundled sample', async () => {
    const { tree } = await api();
    const roots = await tree.getChildren();
    const confs = roots.filter((n): n is Extract<TaskNode, { kind: 'conference' }> => n.kind === 'conference');
    assert.deepEqual(confs.map((c) => c.conference).sort(), ['iclr2024', 'neurips2024', 'sample']);
    const iclr = confs.find((c) => c.conference === 'iclr2024')!;
    assert.equal(tree.getTreeItem(iclr).description, '23 papers · 192 tasks');
    assert.equal(tree.getTreeItem(confs.find((c) => c.conference === 'sample')!).description, '1 paper · 1 task');
    const papers = await tree.getChildren(iclr);
    const p18439 = papers.find((p) => p.kind === 'paper' && p.paperId === '18439')!;
    const pItem = tree.getTreeItem(p18439);
    assert.match(label(pItem), /^18439 Smooth ECE/);
    const tasks = await tree.getChildren(p18439);
    assert.ok(tasks.length > 0);
    const first = tree.getTreeItem(tasks[0]);
    // issue 15: index, type (and no_answer, problems, status) first in the label, then the question
    assert.match(label(first), /^\d+ · T[123]( · no_answer)?( · ⚠\d+)?( · (opened|in progress|submitted|gave up))?: \S/);
    assert.equal(first.command?.command, 'expbench.showTaskBrief');
    assert.ok(first.iconPath instanceof vscode.ThemeIcon);
  });

  it('shows a problem marker with the message in the tooltip', async () => {
    const { tree } = await api();
    const neurips = (await tree.getChildren()).find((n) => n.kind === 'conference' && n.conference === 'neurips2024')!;
    const paper = (await tree.getChildren(neurips)).find((p) => p.kind === 'paper' && p.paperId === '94391')!;
    const task = (await tree.getChildren(paper)).find((t) => t.kind === 'task' && t.task.index === 4)!;
    const item = tree.getTreeItem(task);
    assert.equal((item.iconPath as vscode.ThemeIcon).id, 'warning');
    assert.match(String(item.tooltip), /\/questions\/4\/design_complexity: no constant, independent or dependent variables found: design ground truth is empty/);
  });

  it('"Add Dataset Folder" adds a folder and reports its bad files in the tree', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-ds-'));
    await fsp.mkdir(path.join(dir, 'tasks', 'conf', '1'), { recursive: true });
    await fsp.writeFile(path.join(dir, 'tasks', 'conf', '1', '1_complete_final.json'), '{"questions": [');
    const { tree, store } = await api();
    const before = vscode.workspace.getConfiguration('expbench').get<string[]>('datasets', []);
    try {
      await vscode.commands.executeCommand('expbench.addDatasetFolder', vscode.Uri.file(dir));
      assert.ok(store.dirs().includes(dir));
      const problems = (await tree.getChildren()).filter((n) => n.kind === 'problem');
      const bad = problems.find((n) => n.kind === 'problem' && n.problem.file.startsWith(dir));
      assert.ok(bad, 'the unreadable file shows in the tree');
      assert.match(String(tree.getTreeItem(bad).description), /^not JSON/);
    } finally {
      await vscode.workspace.getConfiguration('expbench').update('datasets', before, vscode.ConfigurationTarget.Global);
      await store.reload();
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('Show Task Brief (real extension host)', function () {
  this.timeout(60_000);

  it('opens the brief webview of a real task, without ground truth', async () => {
    await api();
    await vscode.commands.executeCommand('expbench.showTaskBrief', 'iclr2024/18439/0');
    const find = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs)
      .find((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith('expbench.brief'));
    // the tab model reaches the extension host asynchronously: wait for it (bounded)
    for (let i = 0; i < 50 && !find(); i++) await new Promise((r) => setTimeout(r, 100));
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
    const brief = find();
    assert.ok(brief, `no brief tab among ${tabs.map((t) => t.label).join(', ')}`);
    assert.equal(brief.label, 'Brief iclr2024/18439/0');
  });

  it('says so clearly for an unknown task id', async () => {
    await api();
    const before = vscode.window.tabGroups.all.flatMap((g) => g.tabs).length;
    await vscode.commands.executeCommand('expbench.showTaskBrief', 'nope/0/0');
    assert.equal(vscode.window.tabGroups.all.flatMap((g) => g.tabs).length, before);
  });
});
