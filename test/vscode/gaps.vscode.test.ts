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
    // the fixture's verdicts, as worked out by hand (see test/harness/gapsSession.ts)
    const v = s.record.implementation.verdicts.map((x) => [x.index, x.verdict, x.hunks.map((h) => `${h.path}:${h.newStart}-${h.newEnd}`).join(',')]);
    assert.deepEqual(v, [
      [1, 'unmet', ''], [2, 'partial', 'experiments/calibrate.py:1-6'], [3, 'unmet', ''],
      [4, 'unmet', ''], [5, 'partial', 'toycal/metrics.py:16-26'], [6, 'unmet', ''],
    ]);
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    (await api()).gaps.clear();
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('puts a diagnostic on each cited hunk of a partial requirement', async () => {
    const shown = await vscode.commands.executeCommand<{ root: string; kind: string; stale: boolean }>('expbench.refreshGaps', s.root);
    assert.deepEqual(shown && { root: shown.root, kind: shown.kind, stale: shown.stale }, { root: s.root, kind: 'heuristic', stale: false });

    const c = ours(calibrate);
    assert.equal(c.length, 1, `diagnostics on calibrate.py: ${c.map((d) => d.message).join(' | ')}`);
    assert.deepEqual(lines(c[0]), [0, 5]);
    assert.equal(c[0].range.end.character, '    return min(grid, key=lambda t: nll(logits, ys, t))'.length);
    assert.equal(c[0].severity, vscode.DiagnosticSeverity.Information);
    assert.match(c[0].message, /^Requirement 2 partial: Step 2: Fit a single temperature .* — heuristic: reference file not touched; 2 of 3 symbols found in added lines \(fit_temperature, grid\)$/);
    assert.equal(c[0].code, 'requirement 2');
    const related = c[0].relatedInformation?.map((r) => `${r.location.uri.scheme}:${r.location.uri.path}:${r.location.range.start.line}-${r.location.range.end.line}`);
    assert.deepEqual(related, ['expbench-requirements:/sample/toycal/0/Requirements:4-4', 'expbench-pristine:/experiments/temperature_scaling.py:16-18']);

    const m = ours(metrics);
    assert.equal(m.length, 1);
    assert.deepEqual(lines(m[0]), [15, 25]);
    assert.equal(m[0].severity, vscode.DiagnosticSeverity.Information);
    assert.match(m[0].message, /^Requirement 5 partial: Step 5: Compute test accuracy/);
  });

  it('anchors the requirements that cite nothing on their line of the read-only Requirements document', async () => {
    const r = ours(requirements).sort((a, b) => a.range.start.line - b.range.start.line);
    assert.deepEqual(r.map((d) => lines(d)), [[3, 3], [5, 5], [6, 6], [8, 8]]);
    assert.ok(r.every((d) => d.severity === vscode.DiagnosticSeverity.Warning), 'unmet requirements are warnings');
    assert.deepEqual(r.map((d) => d.message.split(':')[0]), ['Requirement 1 unmet', 'Requirement 3 unmet', 'Requirement 4 unmet', 'Requirement 6 unmet']);
    const doc = await vscode.workspace.openTextDocument(requirements);
    for (const d of r) {
      const n = d.message.match(/^Requirement (\d+)/)![1];
      assert.ok(doc.lineAt(d.range.start.line).text.startsWith(`Requirement ${n}: `), `line ${d.range.start.line} is ${doc.lineAt(d.range.start.line).text}`);
    }
    assert.equal(doc.lineAt(3).text, `Requirement 1: ${s.task.requirements[0].text}`);
  });

  it('shows a CodeLens over each cited hunk and over each requirement', async () => {
    // the CodeLens command needs the document loaded in the editor's model service
    const at = async (uri: vscode.Uri) => (await vscode.workspace.openTextDocument(uri)) && (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri))
      .filter((l) => l.command?.command === 'expbench.openGroundTruthDiff')
      .map((l) => [l.range.start.line, l.command!.title]);
    assert.deepEqual(await at(calibrate), [[0, 'Requirement 2: partial — reference file not touched; 2 of 3 symbols found in added lines (fit_…']]);
    const ml = await at(metrics);
    assert.equal(ml.length, 1);
    assert.equal(ml[0][0], 15);
    assert.match(String(ml[0][1]), /^Requirement 5: partial — reference files touched; 0 of 5 symbols/);
    const rl = await at(requirements);
    assert.deepEqual(rl.map(([line, t]) => [line, String(t).split(' — ')[0]]), [
      [3, 'Requirement 1: unmet'], [4, 'Requirement 2: partial'], [5, 'Requirement 3: unmet'],
      [6, 'Requirement 4: unmet'], [7, 'Requirement 5: partial'], [8, 'Requirement 6: unmet'],
    ]);
  });

  it('opens the pinned ground truth beside the solver\'s hunk in a diff editor', async () => {
    await vscode.commands.executeCommand('expbench.openGroundTruthDiff', { root: s.root, index: 2 });
    await until('the diff tab', () => vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputTextDiff);
    const input = vscode.window.tabGroups.activeTabGroup.activeTab!.input as vscode.TabInputTextDiff;
    assert.equal(input.original.scheme, 'expbench-pristine');
    assert.equal(input.original.path, '/experiments/temperature_scaling.py');
    assert.equal(input.modified.fsPath, calibrate.fsPath);
    const gt = await vscode.workspace.openTextDocument(input.original);
    assert.equal(gt.lineAt(16).text, 'def fit_temperature(logits, ys):', 'ground truth line 17 (pinned pristine file)');
    const left = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === input.original.toString());
    assert.ok(left, 'the ground-truth side is visible');
    assert.deepEqual([left.selection.start.line, left.selection.end.line], [16, 18]);
  });

  it('clears the annotations when a save changes the patch, and restores them when it is the judged one again', async () => {
    const { gaps } = await api();
    const doc = await vscode.workspace.openTextDocument(calibrate);
    const edit = new vscode.WorkspaceEdit();
    edit.insert(calibrate, new vscode.Position(doc.lineCount, 0), 'print("more")\n');
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.ok(await doc.save());
    await until('the annotations to be cleared', () => ours(calibrate).length === 0 && ours(requirements).length === 0);
    assert.equal(gaps.shown?.stale, true);
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', calibrate);
    assert.equal(lenses.filter((l) => l.command?.command === 'expbench.openGroundTruthDiff').length, 0);

    const undo = new vscode.WorkspaceEdit();
    undo.delete(calibrate, new vscode.Range(doc.lineCount - 2, 0, doc.lineCount - 1, 0));
    assert.ok(await vscode.workspace.applyEdit(undo));
    assert.equal(doc.getText(), CALIBRATE_PY);
    assert.ok(await doc.save());
    await until('the annotations to come back', () => ours(calibrate).length === 1 && ours(requirements).length === 4);
    assert.equal(gaps.shown?.stale, false);
    assert.deepEqual(lines(ours(calibrate)[0]), [0, 5]);
  });
});
