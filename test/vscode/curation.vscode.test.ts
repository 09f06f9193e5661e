/**
 * The curator's tools in the real extension host: the ground-truth view of the sample task at a
 * pin (a git repository the test builds from samples/repos/toy-calibration: the pinned commit, then
 * a later one that changes the masked script) and "Validate Task by Running…" on it (real Docker,
 * image expbench/sandbox:1): the record is written, the claims of the expected outcome are found,
 * and a hanging command is stopped at its limit. Nothing is left behind.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type Docker from 'dockerode';
import { git } from '../../src/core/git';
import type { ValidationRecord } from '../../src/core/flows/validateTask';
import type { ValidateCommandResult } from '../../src/extension/curation/validateCommand';
import { paperRepo, writePaper } from '../harness/curationFixture';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { api } from './extensionApi';

const ROOT = path.resolve(__dirname, '../../..');
const SAMPLE = path.join(ROOT, 'samples');
const TASK = 'curated/toycal/0';

describe('Curation: ground-truth view and Validate Task by Running (real extension host, real git, real Docker)', function () {
  this.timeout(180_000);
  let dir: string;
  let repo: string;
  let pinned: string;
  let datasetsBefore: string[];

  before(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-curation-vsc-'));
    const r = await paperRepo(path.join(dir, 'toy-calibration'), path.join(SAMPLE, 'repos', 'toy-calibration'));
    repo = r.dir;
    pinned = await r.commit({}, 'the pin');
    // HEAD after the pin: the masked script prints other numbers, so only the pin gives the expected ones
    await r.commit({ 'experiments/temperature_scaling.py': 'print("test accuracy = 0.5000")\n' }, 'later');
    // the sample task, in a dataset with a curation file pinning the repository built here
    await writePaper(path.join(dir, 'ds'), 'curated/toycal', {
      taskFile: path.join(SAMPLE, 'exp-bench', 'tasks', 'sample', 'toycal', 'toycal_complete_final.json'),
      curation: `// written by the test
{ "version": 1, "paper": "curated/toycal",
  "repository": { "url": ${JSON.stringify(repo)}, "commit": "${pinned}" },
  "environment": { "baseImage": "expbench/sandbox:1", "limits": { "timeSeconds": 120, "memoryMiB": 1024 } } }\n`,
    });
    const { store } = await api();
    datasetsBefore = vscode.workspace.getConfiguration('expbench').get<string[]>('datasets', []);
    await vscode.workspace.getConfiguration('expbench').update('datasets', [...datasetsBefore, path.join(dir, 'ds')], vscode.ConfigurationTarget.Global);
    await store.reload();
    assert.ok(await store.find(TASK), `${TASK} is listed`);
  });

  after(async function () {
    this.timeout(60_000);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace.getConfiguration('expbench').update('datasets', datasetsBefore, vscode.ConfigurationTarget.Global);
    await (await api()).store.reload();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('the ground-truth view shows the task at its pin: design variables by role, references resolved, expected outcome, masked paths with blob ids; a reference opens at its range', async () => {
    const uri = await vscode.commands.executeCommand<vscode.Uri | undefined>('expbench.showGroundTruth', TASK);
    assert.ok(uri, 'the command returned no document');
    assert.equal(uri.scheme, 'expbench-gt');
    const md = (await vscode.workspace.openTextDocument(uri)).getText();
    const blob = async (p: string) => (await git(['rev-parse', `${pinned}:${p}`], { repo: { checkout: repo } })).text.trim();
    for (const s of [
      pinned.slice(0, 12), '## Design variables', '### Constant', '### Independent', '### Dependent', '**calibration**',
      '`experiments/temperature_scaling.py:6-14`', '`toycal/metrics.py:19-33`',
      '## Expected outcome', 'reduces the test ECE from about 0.032 to about 0.012', '## Usage instructions',
      `\`experiments/temperature_scaling.py\` blob \`${await blob('experiments/temperature_scaling.py')}\``,
      `\`README.md\` blob \`${await blob('README.md')}\``,
    ]) assert.ok(md.includes(s), `"${s}" in:\n${md}`);
    // Ctrl+click on the first reference: the pinned file (not HEAD's) beside, lines 6-14 selected
    const editor = await vscode.commands.executeCommand<vscode.TextEditor | undefined>('expbench.openGroundTruthRef', TASK, 1, 0);
    assert.ok(editor, 'no editor for the reference');
    assert.equal(editor.document.uri.scheme, 'expbench-gt-file');
    assert.equal(editor.document.getText(), (await git(['show', `${pinned}:experiments/temperature_scaling.py`], { repo: { checkout: repo } })).text);
    assert.deepEqual([editor.selection.start.line, editor.selection.end.line], [5, 13]);
  });

  it('"Validate Task by Running…" runs the command in the unmasked checkout at the pin, writes the record and finds the expected numbers', async function () {
    const docker: Docker = await requireDocker(this);
    const out = path.join(dir, 'validation-1');
    const r = await vscode.commands.executeCommand<ValidateCommandResult | undefined>('expbench.curation.validate', TASK, {
      run: 'python3 experiments/temperature_scaling.py', out,
    });
    assert.ok(r, 'the command returned no result');
    const rec = JSON.parse(await fsp.readFile(path.join(out, 'validation.json'), 'utf8')) as ValidationRecord;
    assert.deepEqual(rec, r.record);
    assert.equal(rec.commit, pinned);
    assert.equal(rec.pinFrom, 'curation');
    assert.equal(rec.exitCode, 0, await fsp.readFile(path.join(out, 'combined.log'), 'utf8'));
    assert.equal(rec.limits.timeoutMs, 120_000);
    assert.ok(rec.changedFiles.includes('results/temperature_scaling.json'), rec.changedFiles.join(', '));
    const byText = new Map(rec.claims.claims.map((c) => [c.text, c]));
    for (const n of ['1.3', '0.032', '0.012', '0.905']) assert.equal(byText.get(n)?.found, true, `${n}: ${JSON.stringify(byText.get(n))}`);
    const found = rec.claims.claims.filter((c) => c.found).length;
    assert.match(r.summary, new RegExp(`^${TASK} at ${pinned.slice(0, 12)}: exit 0 after [\\d.]+ s; claims: ${found} found, \\d+ derived, \\d+ not found`));
    assert.match(await fsp.readFile(path.join(out, 'stdout.log'), 'utf8'), /ECE after scaling = 0\.0123/);
    await assertNoContainers(docker, ['validate-validation-1']);
  });

  it('"Validate Task by Running…" through the local placement (expbench.curation.placement): the run is a process of the CLI, the record says where it ran', async function () {
    await requireDocker(this);
    const out = path.join(dir, 'validation-placed');
    const r = await vscode.commands.executeCommand<ValidateCommandResult | undefined>('expbench.curation.validate', TASK, {
      run: 'python3 experiments/temperature_scaling.py', out, placement: 'local',
    });
    assert.ok(r, 'the command returned no result');
    const rec = JSON.parse(await fsp.readFile(path.join(out, 'validation.json'), 'utf8')) as ValidationRecord & { placement?: { kind: string; id: string } };
    assert.deepEqual(rec, r.record);
    assert.equal(rec.placement?.kind, 'local');
    assert.match(rec.placement?.id ?? '', /^[^/]+\/\d+\/\d+$/);
    assert.equal(rec.commit, pinned);
    assert.equal(rec.exitCode, 0, await fsp.readFile(path.join(out, 'placement.log'), 'utf8'));
    const byText = new Map(rec.claims.claims.map((c) => [c.text, c]));
    for (const n of ['1.3', '0.032', '0.012', '0.905']) assert.equal(byText.get(n)?.found, true, `${n}: ${JSON.stringify(byText.get(n))}`);
  });

  it('a hanging command is stopped at the time limit, recorded, and the summary says the limit was hit', async function () {
    const docker: Docker = await requireDocker(this);
    const out = path.join(dir, 'validation-hang');
    const r = await vscode.commands.executeCommand<ValidateCommandResult | undefined>('expbench.curation.validate', vscode.Uri.from({ scheme: 'expbench-gt', path: `/${TASK}/Ground truth.md` }), {
      run: 'echo started; sleep 600', out, timeoutSeconds: 3,
    });
    assert.ok(r, 'the command returned no result');
    assert.equal(r.record.timedOut, true);
    assert.equal(r.record.exitCode, null);
    assert.match(r.summary, /stopped at the time limit \(3 s\)/);
    assert.ok(await fsp.stat(path.join(out, 'validation.json')));
    await assertNoContainers(docker, ['validate-validation-hang']);
  });
});
