import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { log } from '../core/log';
import { bundledDatasetDir } from '../core/paths';
import { loadDatasets } from '../core/tasks/loader';
import type { LoadResult, Task } from '../core/tasks/types';
import { onDidChange, setting } from './settings';

const logger = log('tasks');

/** Holds the loaded datasets (settings `expbench.datasets` + the bundled sample) and reloads on change. */
export class TaskStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private result: LoadResult = { tasks: [], papers: [], problems: [], unreadableFiles: [] };
  private loading: Promise<LoadResult> | undefined;
  private readonly disposables: vscode.Disposable[] = [this.changed];

  constructor() {
    this.disposables.push(onDidChange(['datasets', 'showSample'], () => void this.reload()));
  }

  /** The dataset folders in use, absolute (`~` and workspace-relative paths resolved). */
  dirs(): string[] {
    const base = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
    const dirs = setting('datasets').map((d) => path.resolve(base, d.replace(/^~(?=$|[\\/])/, os.homedir())));
    if (setting('showSample')) dirs.push(bundledDatasetDir());
    return dirs;
  }

  /** The current result; loads once on first call. */
  async get(): Promise<LoadResult> {
    if (!this.loading) this.loading = this.load();
    return this.loading;
  }

  async reload(): Promise<LoadResult> {
    this.loading = this.load();
    const r = await this.loading;
    this.changed.fire();
    return r;
  }

  async find(id: string): Promise<Task | undefined> {
    return (await this.get()).tasks.find((t) => t.id === id);
  }

  private async load(): Promise<LoadResult> {
    const dirs = this.dirs();
    this.result = await loadDatasets(dirs);
    logger.info(`datasets: ${dirs.join(', ')}`);
    return this.result;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
