// The trajectory viewer (custom editor `expbench.trajectory`) inside the real extension host: real
// files of ../shared/data/trajectories opened with `vscode.openWith`; the webview's own `rendered`
// messages (src/protocol/trajectory.ts) say what it drew: rows with data, the view's size, the
// selected step and the step whose detail it shows. Go to Step, `expbench.trajectory.open` with a
// `#step=N` reference, "Open as Trajectory" (by content, and its refusal of a non-trajectory) and
// the live tail of a growing JSON Lines file.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';
import type { RenderedState, ViewerPanel } from '../../src/extension/trajectory/viewer/panel';
import { api } from './extensionApi';

const DATA = path.resolve(__dirname, '..', '..', '..', '..', 'shared', 'data', 'trajectories');
const INSPECT = path.join(DATA, 'inspect-eval/METR__inspect-action/2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval');
const OPENHANDS = path.join(DATA, 'openhands-v0/OpenHands__OpenHands/output.jsonl');
const MINI = path.join(DATA, 'mini-swe-agent/gruckion__mini-swe-agent/sympy__sympy-20154.traj.json');
const V1_EVENTS = path.join(DATA, 'openhands-v1/OpenHands__software-agent-sdk/events.jsonl');

async function until<T>(what: string, get: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function trajectories(file: string): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  await importFiles([file], (t) => { out.push(t); });
  return out;
}

async function panelOf(file: string): Promise<ViewerPanel> {
  const provider = (await api()).trajectoryViewer.provider;
  return until(`a viewer of ${path.basename(file)}`, () => provider.panelsOf(file)[0]);
}

const rendered = (p: ViewerPanel, what: string, ok: (r: RenderedState) => boolean, timeoutMs?: number) =>
  until(`${path.basename(p.file)}: ${what} (last rendered ${JSON.stringify(p.rendered)})`, () => (p.rendered && ok(p.rendered) ? p.rendered : undefined), timeoutMs);

describe('Trajectory viewer (real extension host)', function () {
  this.timeout(120_000);
  let tmp: string;
  before(async () => { await api(); tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-viewer-vscode-')); });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('a plain open (vscode.open, as a click in the Explorer) of a real .eval and a real .traj gives the viewer; of events.jsonl and .traj.json the text editor, the viewer among the options', async () => {
    const SWE = path.join(DATA, 'swe-agent/SWE-agent__SWE-agent/swe-agent__test-repo-i1.traj');
    const active = () => vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    for (const file of [INSPECT, SWE]) {
      await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file));
      const input = await until(`the viewer as the editor of ${path.basename(file)}`, () => { const i = active(); return i instanceof vscode.TabInputCustom && i.uri.fsPath === file ? i : undefined; });
      assert.equal(input.viewType, 'expbench.trajectory');
      await panelOf(file);
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
    for (const file of [V1_EVENTS, MINI]) {
      await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file));
      const input = await until(`an editor of ${path.basename(file)}`, () => { const i = active(); return (i instanceof vscode.TabInputText || i instanceof vscode.TabInputCustom) && i.uri.fsPath === file ? i : undefined; });
      assert.ok(input instanceof vscode.TabInputText, `${path.basename(file)} opens as text (the viewer is an option there)`);
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
  });

  it('opens a real Inspect .eval with vscode.openWith: the webview draws its first sample\'s rows; Go to Step selects and details a step', async () => {
    const ts = await trajectories(INSPECT);
    assert.equal(ts.length, 5);
    await vscode.commands.executeCommand('vscode.openWith', vscode.Uri.file(INSPECT), 'expbench.trajectory');
    const p = await panelOf(INSPECT);
    const r = await rendered(p, 'rows of the first sample', (x) => x.rows > 0 && x.total === ts[0].steps.length);
    assert.equal(r.rows, ts[0].steps.length, 'all of its few rows are drawn');
    assert.equal(p.trajectory?.id, ts[0].id);
    const got = await vscode.commands.executeCommand<number>('expbench.trajectory.goToStep', { step: 3 });
    assert.equal(got, 3);
    await rendered(p, 'step 3 selected with its detail', (x) => x.selected === 3 && x.detail === 3);
    assert.equal(await vscode.commands.executeCommand('expbench.trajectory.goToStep', { step: ts[0].steps.length }), undefined, 'a step beyond the end is refused');
  });

  it('opens an OpenHands output.jsonl at a step through expbench.trajectory.open with a #step=N reference', async () => {
    const ts = await trajectories(OPENHANDS);
    assert.equal(ts.length, 3);
    const step = 20;
    const file = await vscode.commands.executeCommand<string>('expbench.trajectory.open', { uri: `${OPENHANDS}#step=${step}` });
    assert.equal(file, OPENHANDS);
    const p = await panelOf(OPENHANDS);
    const r = await rendered(p, `step ${step} of the first instance`, (x) => x.total === ts[0].steps.length && x.selected === step && x.detail === step);
    assert.ok(r.rows > 0);
  });

  it('"Open as Trajectory" opens a .json by its content and refuses, naming it, a JSON that is no trajectory', async () => {
    const mini = path.join(tmp, 'run.json');
    await fsp.copyFile(MINI, mini);
    assert.equal(await vscode.commands.executeCommand('expbench.trajectory.openAs', vscode.Uri.file(mini)), 'mini-swe-agent');
    const p = await panelOf(mini);
    const n = (await trajectories(mini))[0].steps.length;
    await rendered(p, 'its rows', (x) => x.rows > 0 && x.total === n);
    const other = path.join(tmp, 'settings.json');
    await fsp.writeFile(other, JSON.stringify({ 'editor.fontSize': 14 }));
    assert.equal(await vscode.commands.executeCommand('expbench.trajectory.openAs', vscode.Uri.file(other)), undefined);
    assert.equal((await api()).trajectoryViewer.provider.panelsOf(other).length, 0);
  });

  it('opens a large session log progressively (its first lines, then the whole file): every step is drawn and the loading state ends', async () => {
    const n = 30_000;
    const dir = path.join(tmp, 'session', 'private');
    await fsp.mkdir(dir, { recursive: true });
    const file = path.join(dir, 'events.jsonl');
    const t0 = Date.parse('2026-12-01T10:00:00Z');
    await fsp.writeFile(file, `${Array.from({ length: n }, (_, i) => JSON.stringify({ v: 1, at: new Date(t0 + i * 1000).toISOString(), type: 'note.added', text: `note ${i}` })).join('\n')}\n`);
    const totals: number[] = [];
    const provider = (await api()).trajectoryViewer.provider;
    await vscode.commands.executeCommand('vscode.openWith', vscode.Uri.file(file), 'expbench.trajectory');
    const p = await panelOf(file);
    const sub = p.onDidRender((r) => totals.push(r.total));
    if (p.rendered) totals.unshift(p.rendered.total);
    await p.doc.complete;
    assert.equal(p.doc.partial, false);
    await rendered(p, `all ${n} steps`, (x) => x.total === n, 60_000);
    sub.dispose();
    assert.equal(p.trajectory?.steps.length, n);
    assert.ok(totals.every((t) => t <= n), `totals drawn: ${totals.join(', ')}`);
    console.log(`      totals drawn while opening: ${[...new Set(totals)].join(' → ')}`);
    assert.equal(provider.panelsOf(file).length, 1);
  });

  it('tails a JSON Lines file that grows: new steps appear without reopening', async () => {
    const lines = (await fsp.readFile(V1_EVENTS, 'utf8')).split('\n').filter(Boolean);
    const file = path.join(tmp, 'events.jsonl');
    await fsp.writeFile(file, `${lines.slice(0, 6).join('\n')}\n`);
    const before = (await trajectories(file))[0].steps.length;
    const after = (await trajectories(V1_EVENTS))[0].steps.length;
    assert.ok(after > before, `the fixture grows from ${before} to ${after} steps`);
    await vscode.commands.executeCommand('vscode.openWith', vscode.Uri.file(file), 'expbench.trajectory');
    const p = await panelOf(file);
    await rendered(p, `${before} steps`, (x) => x.total === before);
    await fsp.appendFile(file, `${lines.slice(6).join('\n')}\n`);
    await rendered(p, `${after} steps after the file grew`, (x) => x.total === after);
    assert.equal(p.doc.live, true);
  });
});
