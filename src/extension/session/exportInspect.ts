import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExpBenchError } from '../../core/errors';
import { exportSessionInspect, INSPECT_EXPORT_FORMATS, type InspectExportFormat, type InspectExportResult } from '../../core/flows/exportInspect';
import { plural } from '../../core/util/plural';
import type { CommandSpec } from '../commands';
import type { ActiveSession } from './activateSession';

/** Arguments of `expbench.exportSessionInspect` (each asked for when absent and the command runs without an argument object). */
export interface ExportInspectArgs {
  /** A session folder; default this window's session. */
  sessionDir?: string;
  /** Default asked (`.eval` first). */
  format?: InspectExportFormat;
  /** The log file to write; default asked in a save dialog. */
  out?: string;
}

const EXT: Record<InspectExportFormat, string> = { 'inspect-eval': 'eval', 'inspect-json': 'json' };

/**
 * "Export Session as Inspect Log…" (`expbench.exportSessionInspect`): this window's session (or
 * `{sessionDir}`, or a session folder picked in a dialog) written as an Inspect AI log
 * (src/core/flows/exportInspect.ts), `.eval` or `.json`, where the save dialog says. Returns the
 * {@link InspectExportResult}, or undefined when a dialog was dismissed.
 */
export function exportInspectCommand(windowSession: () => Promise<ActiveSession | undefined>): CommandSpec {
  const run = async (a: ExportInspectArgs): Promise<InspectExportResult | undefined> => {
    let dir = a.sessionDir ?? (await windowSession())?.controller.layout.root;
    if (!dir) {
      const picked = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: 'Export this session', title: 'EXP-Bench: the session folder to export (holds workspace/ and private/)' });
      dir = picked?.[0]?.fsPath;
      if (!dir) return undefined;
    }
    let format = a.format;
    if (!format) {
      const pick = await vscode.window.showQuickPick(INSPECT_EXPORT_FORMATS.map((f) => ({ label: `.${EXT[f]}`, description: f === 'inspect-eval' ? 'Inspect eval log (zip)' : 'Inspect JSON log', format: f })), { title: 'EXP-Bench: Inspect log format' });
      if (!pick) return undefined;
      format = pick.format;
    }
    if (!(INSPECT_EXPORT_FORMATS as readonly string[]).includes(format)) throw new ExpBenchError('BAD_INPUT', 'format', `unknown export format "${format}": use ${INSPECT_EXPORT_FORMATS.join(' or ')}`);
    let out = a.out;
    if (!out) {
      const uri = await vscode.window.showSaveDialog({ defaultUri: vscode.Uri.file(path.join(path.dirname(dir), `${path.basename(dir)}.${EXT[format]}`)), filters: { 'Inspect log': [EXT[format]] }, title: 'EXP-Bench: save the Inspect log' });
      out = uri?.fsPath;
      if (!out) return undefined;
    }
    const r = await exportSessionInspect(dir, out, format);
    void vscode.window.showInformationMessage(`EXP-Bench: exported the ${r.solver}'s session of ${r.task} to ${path.basename(r.file)}: ${plural(r.counts.events, 'event')}, ${plural(r.counts.model, 'model call')}, ${plural(r.counts.tool, 'tool call')}, ${plural(r.scores.length, 'score')}.`);
    return r;
  };
  return {
    id: 'expbench.exportSessionInspect',
    execute: async (a?: ExportInspectArgs) => {
      try {
        return await run(a ?? {});
      } catch (e) {
        void vscode.window.showErrorMessage(`EXP-Bench: the export failed: ${e instanceof Error ? e.message : String(e)}`);
        if (a !== undefined) throw e; // a caller with arguments (a script, a test) gets the error
        return undefined;
      }
    },
  };
}
