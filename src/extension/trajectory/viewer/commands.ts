import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExpBenchError } from '../../../core/errors';
import { SessionLayout } from '../../../core/layout';
import { detectFormat } from '../../../core/trajectory/detect';
import { errorMessage } from '../../../core/util/errors';
import type { CommandSpec } from '../../commands';
import { parseStepRef, stepRef } from './detail';
import type { ViewerExtras } from './extras';
import type { TrajectoryEditorProvider } from './provider';

export const OPEN_AS_COMMAND = 'expbench.trajectory.openAs';
export const OPEN_COMMAND = 'expbench.trajectory.open';
export const GO_TO_STEP_COMMAND = 'expbench.trajectory.goToStep';
export const COPY_STEP_REF_COMMAND = 'expbench.trajectory.copyStepReference';

/** Arguments of `expbench.trajectory.open` (JSON-serialisable): a file, a `<file>#step=N` reference, or a session folder; `step` 0-based. */
export interface OpenTrajectoryArgs { uri: string; step?: number }

/** A file path from a path, a `file:` URI string or a `vscode.Uri`. */
function fsPathOf(u: string | vscode.Uri): string {
  if (typeof u !== 'string') return u.fsPath;
  return /^[a-z][\w+.-]*:/i.test(u) && !/^[a-z]:[\\/]/i.test(u) ? vscode.Uri.parse(u).fsPath : u;
}

/**
 * The file `expbench.trajectory.open` shows for `target`: the file itself, or for a folder its
 * session event log `private/events.jsonl`.
 * @throws ExpBenchError BAD_INPUT naming the folder when it has no event log
 */
export async function trajectoryFileFor(target: string): Promise<string> {
  const st = await fsp.stat(target).catch(() => undefined);
  if (!st) throw new ExpBenchError('BAD_INPUT', target, 'does not exist');
  if (!st.isDirectory()) return target;
  const events = new SessionLayout(target).events;
  if (!(await fsp.stat(events).catch(() => undefined))) throw new ExpBenchError('BAD_INPUT', target, 'is a folder without private/events.jsonl (not a session folder)');
  return events;
}

/**
 * The viewer's commands: "Open as Trajectory" (format detected by content; an error naming the
 * file when it is none), `expbench.trajectory.open` {uri, step?}, "Go to Step…" and "Copy Step
 * Reference" on the active viewer. Each returns what it did (tests), undefined when cancelled.
 */
export function viewerCommands(provider: TrajectoryEditorProvider, extras: ViewerExtras): CommandSpec[] {
  return [
    {
      id: OPEN_AS_COMMAND,
      async execute(target?: vscode.Uri | string): Promise<string | undefined> {
        // From the palette: the active editor's file, or the active tab's (a binary file such as an
        // .eval shows VS Code's "binary" placeholder, which is no text editor).
        const tabInput = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
        const tabUri = tabInput instanceof vscode.TabInputText || tabInput instanceof vscode.TabInputCustom ? tabInput.uri : undefined;
        const uri = target ?? vscode.window.activeTextEditor?.document.uri ?? tabUri;
        if (!uri) { void vscode.window.showErrorMessage('EXP-Bench: Open as Trajectory needs a file (right-click one in the Explorer).'); return undefined; }
        const file = fsPathOf(uri);
        const d = await detectFormat(file).catch((e: unknown) => ({ kind: 'unknown' as const, reason: errorMessage(e) }));
        if (d.kind === 'unknown') {
          void vscode.window.showErrorMessage(`EXP-Bench: ${path.basename(file)} is not a trajectory: ${d.reason} (${file}).`);
          return undefined;
        }
        await provider.open(file);
        return d.format;
      },
    },
    {
      id: OPEN_COMMAND,
      async execute(args?: OpenTrajectoryArgs): Promise<string | undefined> {
        if (!args?.uri) throw new ExpBenchError('BAD_INPUT', 'expbench.trajectory.open', 'needs {uri, step?}');
        const ref = parseStepRef(args.uri);
        try {
          const file = await trajectoryFileFor(fsPathOf(ref.file));
          await provider.open(file, args.step ?? ref.step);
          return file;
        } catch (e) {
          void vscode.window.showErrorMessage(`EXP-Bench: cannot open the trajectory: ${errorMessage(e)}`);
          return undefined;
        }
      },
    },
    {
      id: GO_TO_STEP_COMMAND,
      async execute(args?: { step?: number }): Promise<number | undefined> {
        const p = provider.activePanel();
        const n = p?.trajectory?.steps.length ?? 0;
        if (!p) { void vscode.window.showErrorMessage('EXP-Bench: Go to Step needs an open trajectory viewer.'); return undefined; }
        let step = args?.step;
        if (step === undefined) {
          const v = await vscode.window.showInputBox({
            title: 'Go to Step', prompt: `A step of ${p.trajectory?.id ?? path.basename(p.file)} (0 to ${n - 1})`,
            value: p.rendered?.selected !== undefined ? String(p.rendered.selected) : '',
            validateInput: (s) => (/^\d+$/.test(s.trim()) && Number(s) < n ? undefined : `a whole number from 0 to ${n - 1}`),
          });
          if (v === undefined) return undefined;
          step = Number(v.trim());
        }
        if (!Number.isInteger(step) || step < 0 || step >= n) { void vscode.window.showErrorMessage(`EXP-Bench: step ${step} is not in ${p.trajectory?.id} (0 to ${n - 1}).`); return undefined; }
        p.select(step);
        return step;
      },
    },
    {
      id: COPY_STEP_REF_COMMAND,
      async execute(): Promise<string | undefined> {
        const p = provider.activePanel();
        const step = p?.rendered?.selected;
        if (!p || step === undefined) { void vscode.window.showErrorMessage('EXP-Bench: select a step in a trajectory viewer first.'); return undefined; }
        const ref = stepRef(p.file, step);
        await vscode.env.clipboard.writeText(`${ref}\n${extras.link(p.doc.uri, step)}`);
        void vscode.window.showInformationMessage(`EXP-Bench: copied ${path.basename(ref)} and its link.`);
        return ref;
      },
    },
  ];
}

/**
 * The extension's URI handler for `vscode://<publisher>.<name>/trajectory?uri=<file URI>&step=N`:
 * opens the viewer there. Other paths are refused with a message.
 */
export async function handleViewerUri(uri: vscode.Uri): Promise<void> {
  if (uri.path !== '/trajectory') { void vscode.window.showErrorMessage(`EXP-Bench: no handler for the link ${uri.toString()}`); return; }
  const q = new URLSearchParams(uri.query);
  const target = q.get('uri');
  const step = q.get('step');
  if (!target) { void vscode.window.showErrorMessage('EXP-Bench: the trajectory link has no uri.'); return; }
  await vscode.commands.executeCommand(OPEN_COMMAND, { uri: target, ...(step && /^\d+$/.test(step) ? { step: Number(step) } : {}) } satisfies OpenTrajectoryArgs);
}
