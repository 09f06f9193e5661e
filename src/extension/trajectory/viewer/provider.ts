import * as path from 'node:path';
import * as vscode from 'vscode';
import { TrajectoryDocument } from './document';
import type { ViewerExtras } from './extras';
import { viewerHtml } from './html';
import { ViewerPanel } from './panel';

/**
 * The read-only custom editor `expbench.trajectory` ("Open With… EXP-Bench Trajectory"): one
 * {@link TrajectoryDocument} per file (its trajectories read once), one {@link ViewerPanel} per
 * editor. Keeps the panels so that commands find the active one and a step asked for before the
 * editor opened is shown when it does.
 */
export class TrajectoryEditorProvider implements vscode.CustomReadonlyEditorProvider<TrajectoryDocument>, vscode.Disposable {
  readonly panels = new Set<ViewerPanel>();
  private active?: ViewerPanel;
  private readonly pendingSteps = new Map<string, number>();
  private readonly opened = new vscode.EventEmitter<ViewerPanel>();
  /** Fires when a viewer panel is made (tests). */
  readonly onDidOpenPanel = this.opened.event;

  constructor(private readonly extensionUri: vscode.Uri, private readonly extras: ViewerExtras) {}

  /** The document at once: it is read while the webview loads (the panel posts its header once there is something to show). */
  openCustomDocument(uri: vscode.Uri): TrajectoryDocument {
    const doc = new TrajectoryDocument(uri);
    doc.open();
    return doc;
  }

  resolveCustomEditor(doc: TrajectoryDocument, panel: vscode.WebviewPanel): void {
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview')] };
    panel.webview.html = viewerHtml(panel.webview, this.extensionUri, path.basename(doc.file));
    const step = this.pendingSteps.get(doc.file);
    this.pendingSteps.delete(doc.file);
    const p = new ViewerPanel(doc, panel, this.extras, step);
    this.panels.add(p);
    this.active = p;
    panel.onDidChangeViewState((e) => { if (e.webviewPanel.active) this.active = p; });
    panel.onDidDispose(() => { this.panels.delete(p); if (this.active === p) this.active = undefined; p.dispose(); });
    this.opened.fire(p);
  }

  /** The viewer the user looks at now (the last active one while it is open). */
  activePanel(): ViewerPanel | undefined {
    for (const p of this.panels) if (p.panel.active) return p;
    return this.active;
  }

  /** The open viewers of `file`. */
  panelsOf(file: string): ViewerPanel[] {
    return [...this.panels].filter((p) => p.file === file);
  }

  /** Opens `file` in the viewer (or reveals it) and shows `step` when given. */
  async open(file: string, step?: number): Promise<void> {
    const existing = this.panelsOf(file);
    if (step !== undefined && existing.length === 0) this.pendingSteps.set(file, step);
    await vscode.commands.executeCommand('vscode.openWith', vscode.Uri.file(file), 'expbench.trajectory');
    if (step !== undefined) for (const p of existing) p.select(step);
  }

  dispose(): void {
    this.opened.dispose();
  }
}
