import { promises as fsp } from 'node:fs';
import * as vscode from 'vscode';
import { lintTasks } from '../../core/curation/lint';
import { pointerSpan } from '../../core/curation/pointer';
import type { LintFinding, LintReport } from '../../core/curation/types';
import { log } from '../../core/log';
import type { CommandSpec } from '../commands';
import { withCancellableProgress } from '../progress';

const logger = log('curation');

/** The contributed command that lints the configured datasets (package.json). */
export const LINT_COMMAND = 'expbench.lintTaskFiles';
/** `Diagnostic.source` of every lint finding. */
export const LINT_SOURCE = 'EXP-Bench lint';

/** Arguments of {@link LINT_COMMAND} (all optional; from the palette it runs the file rules over the configured datasets). */
export interface LintCommandArgs {
  /** Dataset folders or task files instead of the configured ones. */
  inputs?: string[];
  /** A repository (URL, clone, folder) for the repository rules; `commit` pins it. */
  source?: string;
  commit?: string;
}

/**
 * The task lint in the Problems panel: one diagnostic per finding on its task file, its range the
 * JSON pointer's span in the file's text (recomputed from the editor's text when the file is
 * opened), code = the rule, severity as the finding's.
 */
export class TaskLintDiagnostics implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('expbench.taskLint');
  private byFile = new Map<string, LintFinding[]>();
  private readonly disposables: vscode.Disposable[] = [this.collection];

  /** @param dirs the configured dataset folders (TaskStore.dirs) */
  constructor(private readonly dirs: () => string[]) {
    this.disposables.push(vscode.workspace.onDidOpenTextDocument((d) => {
      const findings = d.uri.scheme === 'file' ? this.byFile.get(d.uri.fsPath) : undefined;
      if (findings) this.collection.set(d.uri, findings.map((f) => toDiagnostic(f, d.getText(), (o) => d.positionAt(o))));
    }));
  }

  /** Lints and replaces every diagnostic of the previous run. @throws ExpBenchError `CANCELLED` */
  async run(args: LintCommandArgs = {}, signal?: AbortSignal): Promise<LintReport> {
    const report = await lintTasks({ inputs: args.inputs ?? this.dirs(), source: args.source, commit: args.commit, signal });
    await this.show(report);
    return report;
  }

  /** Shows `report`'s findings (replacing the earlier ones). */
  async show(report: LintReport): Promise<void> {
    this.byFile = new Map();
    for (const f of report.findings) this.byFile.set(f.file, [...(this.byFile.get(f.file) ?? []), f]);
    this.collection.clear();
    for (const [file, findings] of this.byFile) {
      const uri = vscode.Uri.file(file);
      const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file);
      const text = open ? open.getText() : await fsp.readFile(file, 'utf8').catch(() => '');
      const at = open ? (o: number) => open.positionAt(o) : positionsOf(text);
      this.collection.set(uri, findings.map((f) => toDiagnostic(f, text, at)));
    }
  }

  /** The diagnostics shown for `file` (for tests). */
  diagnostics(file: string): readonly vscode.Diagnostic[] {
    return this.collection.get(vscode.Uri.file(file)) ?? [];
  }

  /** "EXP-Bench: Lint Task Files". */
  commands(): CommandSpec[] {
    return [{
      id: LINT_COMMAND,
      execute: async (arg?: LintCommandArgs | vscode.Uri) => {
        // from the palette: no argument; from an explorer menu: the folder or file
        const args: LintCommandArgs = arg instanceof vscode.Uri ? { inputs: [arg.fsPath] } : arg && typeof arg === 'object' ? arg : {};
        const report = await withCancellableProgress('EXP-Bench: linting task files', async (progress, signal) => {
          progress(args.source ? `with the repository ${args.source}` : 'file rules');
          return this.run(args, signal);
        });
        const s = report.bySeverity;
        const summary = `EXP-Bench: ${report.tasks} tasks linted, ${report.findings.length} findings (${s.error} errors, ${s.warning} warnings, ${s.info} info) in the Problems panel.`;
        logger.info(summary);
        if (report.unreadable.length > 0) {
          void vscode.window.showWarningMessage(`${summary} Not read: ${report.unreadable.map((u) => `${u.input} (${u.message})`).join('; ')}`);
        } else void vscode.window.showInformationMessage(summary);
        return report;
      },
    }];
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

const SEVERITY: Record<LintFinding['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};

function toDiagnostic(f: LintFinding, text: string, at: (offset: number) => vscode.Position): vscode.Diagnostic {
  const span = pointerSpan(text, f.pointer);
  const d = new vscode.Diagnostic(new vscode.Range(at(span.offset), at(span.offset + span.length)), f.message, SEVERITY[f.severity]);
  d.source = LINT_SOURCE;
  d.code = f.rule;
  return d;
}

/** Offset → position over a text that is not open in an editor. */
function positionsOf(text: string): (offset: number) => vscode.Position {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid; else hi = mid - 1;
    }
    return new vscode.Position(lo, offset - starts[lo]);
  };
}
