import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { SessionLayout } from '../../core/layout';
import type { HunkCitation, JudgeRecord, RequirementVerdict } from '../../core/judge/types';
import { pristineUri, requirementsUri } from './documents';
import { isGap, judgedBy, rangeLabel, type RequirementsDoc } from './model';

/** What the editor annotations are computed from (one judged session). */
export interface GapsState {
  root: string;
  taskId: string;
  record: JudgeRecord;
  doc: RequirementsDoc;
}

/** Command that opens the ground truth beside the solver's hunk (registered by the controller). */
export const OPEN_DIFF_COMMAND = 'expbench.openGroundTruthDiff';

/** Diagnostic source: `EXP-Bench (heuristic)` for the offline pre-judge, `EXP-Bench judge` for a model. */
export function diagnosticSource(r: JudgeRecord): string {
  return r.kind === 'heuristic' ? 'EXP-Bench (heuristic)' : 'EXP-Bench judge';
}

const severityOf = (v: RequirementVerdict) => (v.verdict === 'unmet' ? vscode.DiagnosticSeverity.Warning : vscode.DiagnosticSeverity.Information);
const short = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * Whole-line range of a cited hunk's new side (1-based inclusive `newStart..newEnd` → 0-based
 * lines), clamped to the file's `lines`; a hunk with no new lines anchors on `newStart`.
 */
export function hunkRange(h: HunkCitation, lines: string[]): vscode.Range {
  const last = Math.max(0, lines.length - 1);
  const start = Math.min(Math.max(0, h.newStart - 1), last);
  const end = Math.min(Math.max(start, h.newEnd - 1), last);
  return new vscode.Range(start, 0, end, (lines[end] ?? '').length);
}

/** One anchored range of a verdict in a workspace file (1-based inclusive lines), with the facts matched there. */
export interface Anchor {
  path: string;
  startLine: number;
  endLine: number;
  symbols: string[];
}

/**
 * Where a verdict's diagnostics and CodeLenses go: the pre-judge's `anchors` (the lines where the
 * ground truth's facts matched, src/core/judge/types.ts) when the verdict has them, so a new file
 * is marked on its matching symbols and a file that matched nothing (e.g. reproduce_exp_bench.sh
 * cited only as a changed file) is not marked; otherwise the cited hunks' new-side lines. A verdict
 * citing no hunk (unmet, unverifiable) has no anchor: it is shown on the Requirements document.
 */
export function anchorsOf(v: RequirementVerdict): Anchor[] {
  if (v.hunks.length === 0) return []; // unmet and unverifiable: on the Requirements document
  if (v.anchors && v.anchors.length > 0) return v.anchors.map((a) => ({ path: a.path, startLine: a.startLine, endLine: Math.max(a.startLine, a.endLine), symbols: a.symbols }));
  return v.hunks.map((h) => ({ path: h.path, startLine: h.newStart, endLine: Math.max(h.newStart, h.newEnd), symbols: [] }));
}

/** The editor range of an anchor in a file of `lines` (clamped; whole lines). */
export function anchorRange(a: Anchor, lines: string[]): vscode.Range {
  return hunkRange({ path: a.path, newStart: a.startLine, newEnd: a.endLine }, lines);
}

async function fileLines(file: string): Promise<string[]> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file);
  const text = open ? open.getText() : await fsp.readFile(file, 'utf8').catch(() => '');
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Problems-panel diagnostics for the unmet, partial and unverifiable requirements of `s.record`:
 * one per anchored range ({@link anchorsOf}: the matched lines, else the cited hunk's new-side lines); a requirement that cites
 * no hunk gets one on its line of the Requirements document. Unmet → Warning, partial and
 * unverifiable → Information. Each carries the ground-truth ranges and the requirement's line as
 * related information. Returns `[uri, diagnostics]` pairs for `DiagnosticCollection.set`.
 */
export async function buildDiagnostics(s: GapsState): Promise<Array<[vscode.Uri, vscode.Diagnostic[]]>> {
  const ws = new SessionLayout(s.root).workspace;
  const reqUri = requirementsUri(s.root, s.taskId);
  const byUri = new Map<string, [vscode.Uri, vscode.Diagnostic[]]>();
  const add = (uri: vscode.Uri, d: vscode.Diagnostic) => {
    const k = uri.toString();
    if (!byUri.has(k)) byUri.set(k, [uri, []]);
    byUri.get(k)![1].push(d);
  };
  for (const v of s.record.implementation.verdicts) {
    if (!isGap(v)) continue;
    const reqLine = s.doc.lines.get(v.index) ?? 0;
    const message = `Requirement ${v.index} ${v.verdict}: ${short(oneLine(v.requirement), 160)} — ${v.reason}`;
    const related = [
      new vscode.DiagnosticRelatedInformation(new vscode.Location(reqUri, new vscode.Position(reqLine, 0)), `Requirement ${v.index}`),
      ...v.groundTruth.map((g) => new vscode.DiagnosticRelatedInformation(
        new vscode.Location(pristineUri(s.root, g.path), new vscode.Range(Math.max(0, g.startLine - 1), 0, Math.max(0, g.endLine - 1), 0)),
        `ground truth ${rangeLabel(g.path, g.startLine, g.endLine)}`)),
    ];
    const make = (range: vscode.Range) => {
      const d = new vscode.Diagnostic(range, message, severityOf(v));
      d.source = diagnosticSource(s.record);
      d.code = `requirement ${v.index}`;
      d.relatedInformation = related;
      return d;
    };
    const anchors = anchorsOf(v);
    if (anchors.length === 0) {
      add(reqUri, make(new vscode.Range(reqLine, 0, reqLine, (s.doc.text.split('\n')[reqLine] ?? '').length)));
      continue;
    }
    for (const a of anchors) {
      const file = path.join(ws, a.path);
      add(vscode.Uri.file(file), make(anchorRange(a, await fileLines(file))));
    }
  }
  return [...byUri.values()];
}

/**
 * CodeLens over each anchored range in the workspace files ({@link anchorsOf}; "Requirement 4: met
 * — why"), one per range at its first line, and over each requirement's line in the Requirements
 * document; three or more on one line get the short title "Requirement N: verdict — why"; clicking opens the ground-truth diff
 * ({@link OPEN_DIFF_COMMAND}). `state()` returns undefined while there is nothing to show (no
 * judgement, or annotations cleared because the patch changed).
 */
export class GapsCodeLensProvider implements vscode.CodeLensProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(private readonly state: () => GapsState | undefined) {}

  refresh(): void {
    this.changed.fire();
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const s = this.state();
    if (!s) return [];
    const verdicts = s.record.implementation.verdicts;
    const by = judgedBy(s.record);
    const lens = (v: RequirementVerdict, range: vscode.Range, hunk: number | undefined, crowded: boolean, anchor?: number) => new vscode.CodeLens(range, {
      title: `Requirement ${v.index}: ${v.verdict ?? 'harness error'} — ${crowded ? 'why' : short(v.reason.replace(/^heuristic:\s*/, ''), 70)}`,
      tooltip: `${by}: ${oneLine(v.requirement)}\n${v.reason}${v.groundTruth.length ? '\nClick: ground truth beside your code.' : ''}`,
      command: OPEN_DIFF_COMMAND,
      arguments: [{ root: s.root, index: v.index, hunk, ...(anchor !== undefined ? { anchor } : {}) }],
    });
    if (doc.uri.toString() === requirementsUri(s.root, s.taskId).toString()) {
      return verdicts.map((v) => lens(v, new vscode.Range(s.doc.lines.get(v.index) ?? 0, 0, s.doc.lines.get(v.index) ?? 0, 0), undefined, false));
    }
    if (doc.uri.scheme !== 'file') return [];
    const rel = path.relative(new SessionLayout(s.root).workspace, doc.uri.fsPath).split(path.sep).join('/');
    if (rel.startsWith('..') || path.isAbsolute(rel)) return [];
    const lines = doc.getText().split('\n');
    const items: Array<{ v: RequirementVerdict; h: number; a: number; line: number }> = [];
    for (const v of verdicts) {
      anchorsOf(v).forEach((a, i) => {
        if (a.path !== rel) return;
        // the hunk to open beside the ground truth: the cited hunk holding this range, else the first
        const h = Math.max(0, v.hunks.findIndex((x) => x.path === a.path && x.newStart <= a.startLine && a.startLine <= Math.max(x.newStart, x.newEnd)));
        items.push({ v, h: v.anchors?.length ? h : i, a: i, line: anchorRange(a, lines).start.line });
      });
    }
    const perLine = new Map<number, number>();
    for (const it of items) perLine.set(it.line, (perLine.get(it.line) ?? 0) + 1);
    return items.map((it) => lens(it.v, new vscode.Range(it.line, 0, it.line, 0), it.h, (perLine.get(it.line) ?? 0) > 2, it.a));
  }

  dispose(): void {
    this.changed.dispose();
  }
}
