import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExpBenchError } from '../../core/errors';
import { cancelRunSet, type CancelResult } from '../../core/runs/cancel';
import { foldRunSet } from '../../core/runs/fold';
import { RunSetLayout } from '../../core/runs/layout';
import { readOrchestrator } from '../../core/runs/lock';
import { readRunSet } from '../../core/runs/state';
import { errorMessage } from '../../core/util/errors';
import type { CommandRegistrar, CommandSpec } from '../commands';
import { runSetEnv, startInBackground } from './background';
import { RunSetBoard } from './boardPanel';
import { CAMPAIGN_KEY_SECRET, isCampaignView, personAction, type PersonAction } from './campaign';
import { campaignKey, CAMPAIGN_KEY_ENV } from '../../core/campaigns';
import { RunSetIndex, RunSetsTreeProvider } from './runSetsView';

/** What the workbench hands the activation stage (the Run Sets view's data) and the tests. */
export interface RunSetsFeature extends vscode.Disposable {
  index: RunSetIndex;
  tree: RunSetsTreeProvider;
  /** The open boards by run-set folder. */
  boards: Map<string, RunSetBoard>;
  /** Shows (or reveals) the board of `dir`. */
  showBoard(dir: string): RunSetBoard;
}

const dirArg = (a: unknown): string | undefined => (a && typeof a === 'object' && typeof (a as { dir?: unknown }).dir === 'string' ? path.resolve((a as { dir: string }).dir) : undefined);

/**
 * Run sets in VS Code (docs/runs.md "In VS Code"): the Run Sets view, a board per run set, and the
 * commands Start Run Set…, Open Run Set…, Show Run Set Board, Resume Run Set, Cancel Run Set, Open
 * Unit Session, Refresh Run Sets. A run started or resumed here is the CLI's orchestrator in a
 * process of its own (`expbench runs start|resume`): closing the window does not stop it, and the
 * board re-attaches to it through the state file.
 */
export function activateRunSets(context: vscode.ExtensionContext, register: CommandRegistrar): RunSetsFeature {
  const index = new RunSetIndex(context.globalState);
  const tree = new RunSetsTreeProvider(index);
  const boards = new Map<string, RunSetBoard>();
  const logDir = vscode.Uri.joinPath(context.globalStorageUri, 'run-sets').fsPath;

  const pickDir = async (arg: unknown, title: string): Promise<string | undefined> => {
    const given = dirArg(arg);
    if (given) return given;
    const dirs = await index.dirs();
    if (dirs.length) {
      const pick = await vscode.window.showQuickPick(dirs.map((d) => ({ label: path.basename(d), description: d, dir: d })), { title });
      return pick?.dir;
    }
    const chosen = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, title, openLabel: 'Choose Run Set Folder' });
    return chosen?.[0]?.fsPath;
  };
  const requireRunSet = async (dir: string) => {
    const read = await readRunSet(new RunSetLayout(dir).state);
    if (!read || !foldRunSet(read.records)) throw new ExpBenchError('BAD_INPUT', dir, 'holds no run set (no runset.jsonl): start one with "EXP-Bench: Start Run Set…"');
  };

  const resume = async (dir: string) => {
    await requireRunSet(dir);
    const o = await readOrchestrator(new RunSetLayout(dir).orchestrator);
    if (o?.alive) { void vscode.window.showInformationMessage(`EXP-Bench: the run set is running already (process ${o.record.pid}).`); return { pid: o.record.pid, already: true }; }
    const r = await startInBackground(['runs', 'resume', dir], dir, logDir, await runSetEnv(context.secrets));
    await index.remember(dir);
    return { ...r, already: false };
  };
  const cancel = async (dir: string): Promise<CancelResult> => {
    await requireRunSet(dir);
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'EXP-Bench: cancelling the run set…' }, () => cancelRunSet(dir));
  };
  const openUnit = async (dir: string, unit: string) => {
    const read = await readRunSet(new RunSetLayout(dir).state);
    const u = read && foldRunSet(read.records)?.byKey.get(unit);
    if (!u) throw new ExpBenchError('BAD_INPUT', unit, `no such unit in the run set ${dir}`);
    return vscode.commands.executeCommand('expbench.trajectory.open', { uri: new RunSetLayout(dir).session(u.dir) });
  };
  const campaignOf = async (dir: string) => {
    const read = await readRunSet(new RunSetLayout(dir).state);
    const view = read ? foldRunSet(read.records) : undefined;
    if (!view || !isCampaignView(view)) throw new ExpBenchError('BAD_INPUT', dir, 'not a campaign (its run set has no "baseline"): docs/campaigns.md');
    return view;
  };
  const person = async (dir: string, action: PersonAction, who: string, o: { confirmed?: boolean } = {}) => {
    const done = await personAction(context.secrets, dir, await campaignOf(dir), action, who, o);
    index.refresh();
    for (const b of boards.values()) if (b.layout.root === path.resolve(dir)) void b.read();
    if (done) void vscode.window.showInformationMessage(`EXP-Bench: ${done}.`);
    return done;
  };
  const personArgs = (a: unknown): { dir: string; person: string; confirmed?: boolean } => {
    const x = a as { dir?: unknown; person?: unknown; confirmed?: unknown } | undefined;
    // from the Run Sets view's menu the argument is the tree node ({kind: 'person', dir, person: {person}})
    const who = typeof x?.person === 'string' ? x.person : (x?.person as { person?: unknown } | undefined)?.person;
    if (typeof x?.dir !== 'string' || typeof who !== 'string') throw new ExpBenchError('BAD_INPUT', 'expbench.campaign', 'needs {dir, person}');
    return { dir: path.resolve(x.dir), person: who, ...(x.confirmed === true ? { confirmed: true } : {}) };
  };
  const showBoard = (dir: string): RunSetBoard => {
    const abs = path.resolve(dir);
    let b = boards.get(abs);
    if (!b) {
      b = new RunSetBoard(context.extensionUri, abs, {
        openUnit, resume: (d) => resume(d), person: (d, action, who) => person(d, action, who),
        cancel: async (d) => { const r = await cancel(d); void vscode.window.showInformationMessage(`EXP-Bench: run set cancelled (${r.cancelled} unit(s)); Resume goes on with them.`); return r; },
      }, () => { boards.delete(abs); });
      boards.set(abs, b);
    }
    b.show();
    return b;
  };
  const guard = (f: (...a: any[]) => Promise<unknown>) => async (...a: unknown[]) => {
    try {
      return await f(...a);
    } catch (e) {
      void vscode.window.showErrorMessage(`EXP-Bench: ${errorMessage(e)}`);
      return undefined;
    }
  };

  const commands: CommandSpec[] = [
    {
      id: 'expbench.runs.start',
      execute: guard(async (args?: { spec?: string; out?: string }) => {
        const spec = args?.spec ?? (await vscode.window.showOpenDialog({ canSelectFiles: true, title: 'Run-set spec (docs/runs.md)', filters: { 'Run-set spec': ['jsonc', 'json'] }, openLabel: 'Use Spec' }))?.[0]?.fsPath;
        if (!spec) return undefined;
        const out = args?.out ?? (await vscode.window.showSaveDialog({ title: 'Folder of the new run set', defaultUri: vscode.Uri.file(path.join(path.dirname(spec), path.basename(spec).replace(/\.jsonc?$/, ''))), saveLabel: 'Start Run Set' }))?.fsPath;
        if (!out) return undefined;
        const r = await startInBackground(['runs', 'start', spec, '--out', out], out, logDir, await runSetEnv(context.secrets));
        await index.remember(out);
        showBoard(out);
        return { dir: path.resolve(out), ...r };
      }),
    },
    {
      id: 'expbench.runs.open',
      execute: guard(async (args?: { dir?: string }) => {
        const dir = dirArg(args) ?? (await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, title: 'Run set folder', openLabel: 'Open Run Set' }))?.[0]?.fsPath;
        if (!dir) return undefined;
        await requireRunSet(dir);
        await index.remember(dir);
        return showBoard(dir).layout.root;
      }),
    },
    { id: 'expbench.runs.showBoard', execute: guard(async (a?: unknown) => { const dir = await pickDir(a, 'Show the board of which run set?'); if (!dir) return undefined; await requireRunSet(dir); return showBoard(dir).layout.root; }) },
    { id: 'expbench.runs.resume', execute: guard(async (a?: unknown) => { const dir = await pickDir(a, 'Resume which run set?'); return dir ? resume(dir) : undefined; }) },
    { id: 'expbench.runs.cancel', execute: guard(async (a?: unknown) => { const dir = await pickDir(a, 'Cancel which run set?'); return dir ? cancel(dir) : undefined; }) },
    {
      id: 'expbench.runs.openUnit',
      execute: guard(async (a?: { dir?: string; unit?: string }) => {
        if (!a?.dir || !a.unit) throw new ExpBenchError('BAD_INPUT', 'expbench.runs.openUnit', 'needs {dir, unit}');
        return openUnit(path.resolve(a.dir), a.unit);
      }),
    },
    { id: 'expbench.runs.refresh', execute: () => { index.refresh(); for (const b of boards.values()) void b.read(); } },
    { id: 'expbench.campaign.copyLink', execute: guard(async (a?: unknown) => { const p = personArgs(a); return person(p.dir, 'copyLink', p.person); }) },
    { id: 'expbench.campaign.reissueLink', execute: guard(async (a?: unknown) => { const p = personArgs(a); return person(p.dir, 'reissue', p.person, p); }) },
    { id: 'expbench.campaign.revokeLink', execute: guard(async (a?: unknown) => { const p = personArgs(a); return person(p.dir, 'revoke', p.person, p); }) },
    {
      id: 'expbench.campaign.setKey',
      execute: guard(async () => {
        if (process.env[CAMPAIGN_KEY_ENV]) void vscode.window.showWarningMessage(`EXP-Bench: ${CAMPAIGN_KEY_ENV} is set in this window's environment: it is used before the stored key.`);
        const k = await vscode.window.showInputBox({
          title: 'Campaign link key', password: true, ignoreFocusOut: true,
          prompt: 'The organiser\'s secret each person\'s link is derived from (the same as EXPBENCH_CAMPAIGN_KEY of `expbench runs links` and the server); kept in SecretStorage',
          validateInput: (v) => { try { campaignKey({ [CAMPAIGN_KEY_ENV]: v }); return undefined; } catch { return 'at least 32 characters (e.g. `openssl rand -hex 32`)'; } },
        });
        if (!k) return false;
        await context.secrets.store(CAMPAIGN_KEY_SECRET, k);
        void vscode.window.showInformationMessage('EXP-Bench: campaign link key stored in SecretStorage.');
        return true;
      }),
    },
    { id: 'expbench.campaign.clearKey', execute: guard(async () => { await context.secrets.delete(CAMPAIGN_KEY_SECRET); return true; }) },
  ];
  const registered = register(commands);
  return {
    index, tree, boards, showBoard,
    dispose: () => { for (const d of registered) d.dispose(); for (const b of boards.values()) b.dispose(); tree.dispose(); index.dispose(); },
  };
}
