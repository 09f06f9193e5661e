import * as vscode from 'vscode';
import { budgetShare, BudgetLevel, formatWorking, HEARTBEAT_MS } from '../../core/session/clock';
import { log } from '../../core/log';
import { CommandRecord, WorkspaceRecorder } from '../../core/session/recorder';
import { WorkspaceWatcher, type WatchBatch } from '../../core/session/watcher';
import type { SessionHandle } from '../../core/flows/sessionService';
import { errorMessage } from '../../core/util/errors';

const logger = log('session');

export interface RecorderOptions {
  /** Command run when the clock's status bar item is clicked (e.g. a pause/resume toggle). */
  clockCommand?: string;
  /** Heartbeat interval, ms (default HEARTBEAT_MS, see src/core/session/clock.ts). */
  heartbeatMs?: number;
  /** Called after each batch of changes on disk is recorded (the stepper refreshes its patch summary). */
  onDidChangeFiles?: (batch: WatchBatch) => void;
}

/** What {@link registerRecorder} returns: the terminal's entry point, and disposal. */
export interface SessionRecorder extends vscode.Disposable {
  /** Records a command run in the task's container terminal (`command.run`). */
  recordCommand(c: CommandRecord): Promise<void>;
  /** The core recorder (for tests: `settled()` waits until everything recorded is on disk). */
  readonly workspace: WorkspaceRecorder;
  /** The clock's status bar item. */
  readonly statusBar: vscode.StatusBarItem;
}

/**
 * Records the baseliner's work on an open session (see docs/events.md):
 * - saves of files under the session's workspace → `file.edited` with a diff against the content
 *   last recorded, or the `task start` commit the first time;
 * - files created, changed or deleted in the workspace by any writer (editor, terminal, work
 *   container: the core's host-side {@link WorkspaceWatcher}, caches and ignored files excluded)
 *   → `file.created` / `file.changed` / `file.deleted`;
 * - commands the container terminal reports through `recordCommand` → `command.run`;
 * - the clock in the status bar (`$(watch) 12:34`, `$(debug-pause)` while paused; warning colour from 80% of the
 *   budget, error colour from 100%), refreshed every second;
 * - the clock's heartbeat and budget warnings (shown as notifications, recorded once each).
 * Everything is registered on `context.subscriptions` and on the returned disposable; disposing
 * stops recording but does not release the session (the controller does).
 */
export function registerRecorder(context: vscode.ExtensionContext, session: SessionHandle, opts: RecorderOptions = {}): SessionRecorder {
  const recorder = session.workspaceRecorder();
  const disposables: vscode.Disposable[] = [];
  const report = (what: string) => (e: unknown) => logger.error(`recording ${what} failed: ${errorMessage(e)}`);

  disposables.push(vscode.workspace.onDidSaveTextDocument((doc) => {
    if (doc.uri.scheme !== 'file') return;
    recorder.recordSave(doc.uri.fsPath, doc.getText()).catch(report(`the save of ${doc.uri.fsPath}`));
  }));

  let watcher: WorkspaceWatcher | undefined;
  let stopped = false;
  void WorkspaceWatcher.start(session.layout.workspace, recorder, { onBatch: (b) => opts.onDidChangeFiles?.(b) })
    .then((w) => { if (stopped) void w.dispose(); else watcher = w; })
    .catch(report(`the workspace watcher of ${session.layout.workspace}`));
  disposables.push({ dispose: () => { stopped = true; void watcher?.dispose().catch(report('the workspace watcher')); } });

  const item = vscode.window.createStatusBarItem('expbench.session.clock', vscode.StatusBarAlignment.Left, 100);
  item.name = 'EXP-Bench session clock';
  if (opts.clockCommand) item.command = opts.clockCommand;
  const refresh = () => renderClock(item, session);
  refresh();
  item.show();
  const ticker = setInterval(refresh, 1000);
  disposables.push(item, { dispose: () => clearInterval(ticker) }, session.onDidChange(refresh));

  disposables.push(session.startHeartbeat(opts.heartbeatMs ?? HEARTBEAT_MS, (levels: BudgetLevel[]) => {
    const top = Math.max(...levels);
    const msg = top >= 100 ? 'The time budget of this session is used up.' : 'You have used 80% of the time budget of this session.';
    void vscode.window.showWarningMessage(msg);
  }));

  let disposed = false;
  const result: SessionRecorder = {
    recordCommand: (c) => recorder.recordCommand(c),
    workspace: recorder,
    statusBar: item,
    dispose: () => {
      if (disposed) return;
      disposed = true;
      for (const d of disposables.splice(0).reverse()) d.dispose();
    },
  };
  context.subscriptions.push(result);
  return result;
}

function renderClock(item: vscode.StatusBarItem, session: SessionHandle): void {
  const working = session.workingMs();
  const status = session.clockStatus;
  const { clock } = session.state;
  const suffix = status === 'running' ? '' : status === 'stopped' ? ' $(check)' : ' $(debug-pause)';
  item.text = `$(watch) ${formatWorking(working)}${suffix}`;
  const share = budgetShare(clock, working);
  item.backgroundColor = share === undefined || share < 0.8 ? undefined
    : new vscode.ThemeColor(share >= 1 ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
  const budget = clock.budgetMs ? ` of ${formatWorking(clock.budgetMs)} (${Math.round(100 * (share ?? 0))}%)` : '';
  const what = { running: 'running', paused: 'paused', 'not-started': 'not started (paused)', stopped: 'stopped' }[status];
  item.tooltip = `EXP-Bench working time ${formatWorking(working)}${budget}: clock ${what}. Pauses are not counted.`;
}
