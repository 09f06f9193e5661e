// Gaps in the editor, inside the real extension host: a session of the bundled sample task is
// prepared, filled with a partial solution, submitted and judged (heuristic) by the real core
// functions; `expbench.refreshGaps` then shows it. Checked: the Problems-panel diagnostics (uri,
// lines = the cited hunk's new-side lines, severity, message, source), the Requirements document
// anchors of requirements that cite nothing, the CodeLenses, the ground-truth diff editor, and the
// clearing / restoring of the annotations when a save changes the patch.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api } from './extensionApi';
import { CALIBRATE_PY, makeJudgedSampleSession, type JudgedSession } from '../harness/gapsSession';

const SOURCE = 'EXP-Bench (heuristic)';

const ours = (uri: vscode.Uri) => vscode.languages.getDiagnostics(uri).filter((d) => d.source === SOURCE);
const lines = (d: vscode.Diagnostic) => [d.range.start.line, d.range.end.line];

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('Gaps in the editor (real extension host)', function () {
  this.timeout(60_000);
  let tmp: string;
  let s: JudgedSession;
  let calibrate: vscode.Uri;
  let metrics: vscode.Uri;
  let requirements: vscode.Uri;

  before(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-gaps-'));
    s = await makeJudgedSampleSession(path.join(tmp, 'session'), path.join(tmp, 'cache'));
    calibrate = vscode.Uri.file(path.join(s.layout.workspace, 'experiments', 'calibrate.py'));
    metrics = vscode.Uri.file(path.join(s.layout.workspace, 'toycal', 'metrics.py'));
    requirements = vscode.Uri.from({ scheme: 'expbench-requirements', path: `/${s.task.id}/Requirements`, query: s.root });
    // the fixture's verdicts (the pre-judge reads code facts; see test/harness/gapsSession.ts)
    const v = s.record.implementation.verdicts.map((x) => [x.index, x.verdict, x.hunks.map((h) => `${h.path}:${h.newStart}-${h.newEnd}`).join(','),
      (x.anchors ?? []).map((h) => `${h.path}:${h.startLine}-${h.endLine}`).join(',')]);
    assert.deepEqual(v.filter((x) => x[2] !== ''), [[2, 'met', 'experiments/calibrate.py:1-6', 'experiments/calibrate.py:5-6']]);
    assert.deepEqual(v.filter((x) => x[1] !== 'unmet').map((x) => x[0]), [2]);
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    (await api()).gaps.clear();
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('puts no diagnostic on code for met or uncited requirements, and none on files nothing matched in', async () => {
    const shown = await vscode.commands.executeCommand<{ root: string; kind: string; stale: boolean }>('expbench.refreshGaps', s.root);
    assert.deepEqual(shown && { root: shown.root, kind: shown.kind, stale: shown.stale }, { root: s.root, kind: 'heuristic', stale: false });
    assert.deepEqual(ours(calibrate), []);
    assert.deepEqual(ours(metrics), [], 'requirement 5 is unmet: its weak matches in metrics.py are not marked');
    assert.deepEqual(ours(vscode.Uri.file(s.layout.script)), []);
  });

  it('anchors the requirements that cite nothing on their line of the read-only Requirements document', async () => {
    const r = ours(requirements).sort((a, b) => a.range.start.line - b.range.start.line);
    assert.deepEqual(r.map((d) => lines(d)), [[3, 3], [5, 5], [6, 6], [7, 7], [8, 8]]);
    assert.ok(r.every((d) => d.severity === vscode.DiagnosticSeverity.Warning), 'unmet requirements are warnings');
    assert.deepEqual(r.map((d) => d.message.split(':')[0]), ['Requirement 1 unmet', 'Requirement 3 unmet', 'Requirement 4 unmet', 'Requirement 5 unmet', 'Requirement 6 unmet']);
    const doc = await vscode.workspace.openTextDocument(requirements);
    for (const d of r) {
      const n = d.message.match(/^Requirement (\d+)/)![1];
      assert.ok(doc.lineAt(d.range.start.line).text.startsWith(`Requirement ${n}: `), `line ${d.range.start.line} is ${doc.lineAt(d.range.start.line).text}`);
    }
    assert.equal(doc.lineAt(3).text, `Requirement 1: ${s.task.requirements[0].text}`);
  });

  it('shows one CodeLens per anchored range, on the matched lines (not line 1 of the file), none on unrelated files', async () => {
    // the CodeLens command needs the document loaded in the editor's model service
    const at = async (uri: vscode.Uri) => (await vscode.workspace.openTextDocument(uri)) && (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri))
      .filter((l) => l.command?.command === 'expbench.openGroundTruthDiff')
      .map((l) => [l.range.start.line, l.command!.title]);
    const cl = await at(calibrate);
    assert.equal(cl.length, 1);
    assert.equal(cl[0][0], 4, 'on the anchored lines 5-6 (the grid search), not on line 1');
    assert.match(String(cl[0][1]), /^Requirement 2: met — /);
    assert.deepEqual(await at(metrics), []);
    assert.deepEqual(await at(vscode.Uri.file(s.layout.script)), [], 'no repeat on reproduce_exp_bench.sh');
    const rl = await at(requirements);
    assert.deepEqual(rl.map(([line, t]) => [line, String(t).split(' — ')[0]]), [
      [3, 'Requirement 1: unmet'], [4, 'Requirement 2: met'], [5, 'Requirement 3: unmet'],
      [6, 'Requirement 4: unmet'], [7, 'Requirement 5: unmet'], [8, 'Requirement 6: unmet'],
    ]);
  });

  it('opens the pinned ground truth beside a read-only view of the solver\'s file, with a short title', async () => {
    await vscode.commands.executeCommand('expbench.openGroundTruthDiff', { root: s.root, index: 2 });
    await until('the diff tab', () => vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputTextDiff);
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab!;
    const input = tab.input as vscode.TabInputTextDiff;
    assert.equal(input.original.scheme, 'expbench-pristine');
    assert.equal(input.original.path, '/experiments/temperature_scaling.py');
    assert.equal(input.modified.scheme, 'expbench-yours', 'the right side is a read-only view, not the editable file');
    assert.equal(input.modified.path, '/experiments/calibrate.py');
    assert.equal((await vscode.workspace.openTextDocument(input.modified)).getText(), CALIBRATE_PY);
    assert.equal(tab.label, 'R2: temperature_scaling.py:17-19 ↔ calibrate.py');
    assert.ok(tab.label.length <= 60, tab.label);
    assert.equal(tab.isDirty, false);
    const gt = await vscode.workspace.openTextDocument(input.original);
    assert.equal(gt.lineAt(16).text, 'def fit_temperature(logits, ys):', 'ground truth line 17 (pinned pristine file)');
    const left = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === input.original.toString());
    assert.ok(left, 'the ground-truth side is visible');
    assert.deepEqual([left.selection.start.line, left.selection.end.line], [16, 18]);
    const right = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === input.modified.toString());
    assert.ok(right, 'your side is visible');
    assert.deepEqual([right.selection.start.line, right.selection.end.line], [4, 5], 'your side selects the anchored lines');
  });

  it('"Open the diff" of the stepper opens a diff of the patch, not an untitled buffer', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await (await api()).gaps.openPatch(s.layout.workspace);
    await until('the patch diff tab', () => /^Patch since "task start"/.test(vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? ''));
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab!;
    assert.match(tab.label, /^Patch since "task start" \(\d+ files?\)$/);
    assert.ok(!(tab.input instanceof vscode.TabInputText), 'a diff editor, not a text buffer');
    assert.equal(tab.isDirty, false);
    assert.equal(vscode.workspace.textDocuments.filter((d) => d.isUntitled).length, 0, 'no untitled buffer');
    // the left side of a modified file is its task-start version (read-only, never the pristine ground truth)
    const left = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'expbench-task-start' && d.uri.path === '/toycal/metrics.py')
      ?? await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: 'expbench-task-start', path: '/toycal/metrics.py', query: s.layout.workspace, fragment: 'HEAD' }));
    assert.ok(left.getText().includes('def ece(') && !left.getText().includes('def brier('), 'the left side is the task-start version');
  });

  it('clears the annotations when a save changes the patch, and restores them when it is the judged one again', async () => {
    const { gaps } = await api();
    const doc = await vscode.workspace.openTextDocument(calibrate);
    const edit = new vscode.WorkspaceEdit();
    edit.insert(calibrate, new vscode.Position(doc.lineCount, 0), 'print("more")\n');
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.ok(await doc.save());
    await until('the annotations to be cleared', () => ours(requirements).length === 0);
    assert.equal(gaps.shown?.stale, true);
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', calibrate);
    assert.equal(lenses.filter((l) => l.command?.command === 'expbench.openGroundTruthDiff').length, 0);

    const undo = new vscode.WorkspaceEdit();
    undo.delete(calibrate, new vscode.Range(doc.lineCount - 2, 0, doc.lineCount - 1, 0));
    assert.ok(await vscode.workspace.applyEdit(undo));
    assert.equal(doc.getText(), CALIBRATE_PY);
    assert.ok(await doc.save());
    await until('the annotations to come back', () => ours(requirements).length === 5);
    assert.equal(gaps.shown?.stale, false);
  });
});
