import * as vscode from 'vscode';

/**
 * A `TreeDataProvider` that stands in for one loaded on first use: the tree view is created at
 * activation with this provider; its first `getChildren` loads the real one (`load`), and from
 * then on every call and every change event is passed through. When loading fails, the view
 * shows the error (`onError`) and no rows.
 */
export class LazyTreeDataProvider<T> implements vscode.TreeDataProvider<T>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<T | T[] | undefined | null | void>();
  readonly onDidChangeTreeData = this.changed.event;
  private target: vscode.TreeDataProvider<T> | undefined;
  private forwarding: vscode.Disposable | undefined;

  /**
   * @param load loads the real provider
   * @param onError shows why loading failed (the view's message)
   * @param onRootsListed called once, after the top level is first listed (empty or not, or its
   *   loading failed): the view's "no tasks" welcome waits for it, so it never shows while loading
   */
  constructor(
    private readonly load: () => Promise<vscode.TreeDataProvider<T>>,
    private readonly onError: (message: string) => void,
    private onRootsListed: (() => void) | undefined = undefined,
  ) {}

  async getChildren(element?: T): Promise<T[]> {
    let target: vscode.TreeDataProvider<T>;
    try {
      target = await this.resolve();
    } catch (e) {
      this.onError(e instanceof Error ? e.message : String(e));
      if (element === undefined) this.rootsListed();
      return [];
    }
    try {
      return (await target.getChildren(element)) ?? [];
    } finally {
      if (element === undefined) this.rootsListed();
    }
  }

  private rootsListed(): void {
    const once = this.onRootsListed;
    this.onRootsListed = undefined;
    once?.();
  }

  /** Elements only come from the loaded provider's `getChildren`, so it is loaded here. */
  async getTreeItem(element: T): Promise<vscode.TreeItem> {
    return (await this.resolve()).getTreeItem(element);
  }

  async getParent(element: T): Promise<T | undefined> {
    const target = await this.resolve();
    return (await target.getParent?.(element)) ?? undefined;
  }

  dispose(): void {
    this.forwarding?.dispose();
    this.changed.dispose();
  }

  private async resolve(): Promise<vscode.TreeDataProvider<T>> {
    if (this.target) return this.target;
    const target = await this.load();
    if (!this.target) {
      this.target = target;
      this.forwarding = target.onDidChangeTreeData?.((e) => this.changed.fire(e));
    }
    return this.target;
  }
}
