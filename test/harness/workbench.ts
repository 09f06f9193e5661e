// Page objects for the real VS Code workbench (code-server) in Playwright: the command palette,
// view containers, tree views, webviews (nested iframes), text waits and screenshots.
// Selectors are VS Code 1.100's DOM (class names of the workbench parts and monaco lists).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BrowserContext, Frame, Locator, Page } from 'playwright-core';
import { until } from './until';

/** A label to match: a string matches the whole visible label, a RegExp any part of it. */
export type LabelMatch = string | RegExp;

/** `s` with the RegExp special characters escaped. */
export const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** An error's first line (a Playwright error's call log follows it). */
export const firstLine = (e: unknown): string => (e instanceof Error ? e.message.split('\n')[0] : String(e));
/** The first line of each row a quick input lists, joined for an error message ("none" when it lists none). */
export const listedRows = async (widget: Locator): Promise<string> =>
  (await widget.locator('.monaco-list-row').allInnerTexts().catch(() => [])).map((t) => t.split('\n')[0]).join(' | ') || 'none';
/** `m` as a RegExp: a string matches the whole label (surrounding spaces allowed). */
export const asRegExp = (m: LabelMatch): RegExp => (typeof m === 'string' ? new RegExp(`^\\s*${escapeRe(m)}\\s*$`) : m);

export class Workbench {
  /**
   * @param page a page showing the workbench
   * @param screenshotsDir folder for `screenshot(name)` (created on demand)
   * @param timeoutMs default wait for each UI step (ms)
   */
  constructor(readonly page: Page, readonly screenshotsDir: string, readonly timeoutMs = 30_000,
    private readonly urlFor?: (folder: string) => string) {}

  /**
   * Opens `folder` (absolute path on this machine; a `.code-workspace` file opens as a workspace) in
   * the same browser page, the way a user opens a recent folder, and waits for the workbench and
   * for it to have read the EXP-Bench extension's contributions. Tests that open another folder call
   * `openFolder(initialFolder)` in their `after` hook so later tests see the usual window.
   * Throws when the workbench was built without a code-server URL (see run-e2e.ts).
   */
  async openFolder(folder: string): Promise<void> {
    if (!this.urlFor) throw new Error('this Workbench cannot open folders (constructed without a URL builder)');
    await this.page.goto(this.urlFor(folder), { waitUntil: 'domcontentloaded', timeout: 90_000 });
    await this.ready();
    await this.extensionContributed('EXP-Bench'); // its menus (Explorer's "Open as Trajectory") and commands are known
    if (folder.endsWith('.code-workspace')) await this.reloadWhileNoFolder(folder);
  }

  /**
   * code-server 4.100 sometimes opens a workspace file as an empty window ("No Folder Opened"),
   * with no extension involved (reproduced with a bare code-server: 2 of 12 fresh workspace files
   * at load 21). That is the editor's fault, not what a test checks: the window is reloaded, as a
   * user would, at most twice, each time said in the log; the Explorer is left open.
   * @throws Error when the window still has no folder after that
   */
  private async reloadWhileNoFolder(file: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      await this.openViewContainer('Explorer');
      const empty = this.page.locator('.part.sidebar .pane-header', { hasText: /no folder opened/i }).first();
      const root = this.page.locator('.part.sidebar .explorer-folders-view .monaco-list-row').first();
      const seen = await Promise.race([
        root.waitFor({ state: 'visible', timeout: this.timeoutMs }).then(() => 'folder' as const, () => 'timeout' as const),
        empty.waitFor({ state: 'visible', timeout: this.timeoutMs }).then(() => 'empty' as const, () => 'timeout' as const),
      ]);
      if (seen === 'folder') return;
      if (attempt >= 2) throw new Error(`code-server opened ${path.basename(file)} with no folder ${attempt + 1} times (${seen})`);
      console.log(`      [harness] code-server opened ${path.basename(file)} with no folder (${seen}); reloading the window`);
      await this.page.reload({ waitUntil: 'domcontentloaded', timeout: 90_000 });
      await this.ready();
      await this.extensionContributed('EXP-Bench');
    }
  }

  /** The "Restricted Mode" item of the status bar (shown while the window is not trusted). */
  restrictedModeItem(): Locator {
    return this.page.locator('.part.statusbar .statusbar-item', { hasText: 'Restricted Mode' });
  }

  /**
   * Whether this window is trusted, read the way a user reads it: "Workspaces: Manage Workspace
   * Trust" opens the Workspace Trust editor, whose header says "You trust this folder/workspace" or
   * "You are in Restricted Mode"; the editor is closed again. A folder opens untrusted unless it
   * (or a parent folder) was trusted in this browser context.
   */
  async isTrusted(): Promise<boolean> {
    const header = await this.openTrustEditor();
    const trusted = (await header.getAttribute('class'))?.includes('workspace-trust-trusted') ?? false;
    await this.closeTrustEditor();
    return trusted;
  }

  /**
   * Trusts this window's folder or workspace the way a user does: "Workspaces: Manage Workspace
   * Trust", then a button of the Workspace Trust editor: "Trust" (`which` = 'folder': only the open
   * folder and the workspace file, never a parent) or "Trust Parent" ('parent': the folder above
   * it, so every folder in it opens trusted). The button is clicked until the editor says the window
   * is trusted (the editor draws itself again as its model loads, and a click on the replaced
   * button is lost); then it waits until the status bar's "Restricted Mode" item is gone and closes
   * the editor. Waits first for that item: VS Code offers the command once Workspace Trust has settled.
   * @returns the time (ms since the epoch) the editor first said the window is trusted
   * @throws Error when the window is trusted already (a test that trusts expects Restricted Mode first)
   */
  async trustWorkspace(which: 'folder' | 'parent' = 'folder'): Promise<number> {
    // Workspace Trust has settled (its command is offered only then): the window says Restricted Mode
    await this.restrictedModeItem().waitFor({ state: 'visible', timeout: this.timeoutMs });
    const header = await this.openTrustEditor();
    if ((await header.getAttribute('class'))?.includes('workspace-trust-trusted')) throw new Error('trustWorkspace: the window is trusted already');
    const button = this.page.locator('.workspace-trust-editor .monaco-button', { hasText: which === 'folder' ? /^\s*Trust\s*$/ : /^\s*Trust Parent\s*$/ }).first();
    await this.clickUntil(button, this.page.locator('.workspace-trust-editor .workspace-trust-header.workspace-trust-trusted').first());
    const trustedAt = Date.now();
    await this.restrictedModeItem().waitFor({ state: 'hidden', timeout: this.timeoutMs });
    await this.closeTrustEditor();
    return trustedAt;
  }

  /**
   * Clicks `target` until `done` shows: a part that draws itself again (a webview's section on a
   * second post of its data, the Workspace Trust editor once its model loads, a tree as its data
   * changes) replaces the element, and a click on the replaced one is lost. Each click and each
   * wait for `done` is bounded (5 s) and tried again, never a fixed pause.
   * @param ms the whole budget (ms; default `timeoutMs`)
   * @returns how many clicks it took
   * @throws Error naming both, with the last attempt's first line, when `done` does not show within `ms`
   */
  async clickUntil(target: Locator, done: Locator, ms = this.timeoutMs): Promise<number> {
    const deadline = Date.now() + ms;
    let last: unknown;
    for (let clicks = 1; Date.now() < deadline; clicks++) {
      try {
        await target.click({ timeout: 5_000 });
        await done.waitFor({ state: 'visible', timeout: 5_000 });
        return clicks;
      } catch (e) {
        last = e;
        // the click may have landed and `done` only be slow: it counts when it shows before the next click
        if (await done.isVisible().catch(() => false)) return clicks;
      }
    }
    throw new Error(`clickUntil: ${String(done)} did not show after clicking ${String(target)} for ${ms} ms: ${firstLine(last)}`);
  }

  /** Opens the Workspace Trust editor and returns its header once it shows this window's state. */
  async openTrustEditor(): Promise<Locator> {
    await this.runCommand('Workspaces: Manage Workspace Trust');
    const header = this.page.locator('.workspace-trust-editor .workspace-trust-header').first();
    await header.locator('.workspace-trust-title-text', { hasText: /You trust this|You are in Restricted Mode/ }).waitFor({ state: 'visible', timeout: this.timeoutMs });
    return header;
  }

  /** Closes the Workspace Trust editor's tab. */
  async closeTrustEditor(): Promise<void> {
    const tab = this.page.locator('.part.editor .tab', { hasText: 'Workspace Trust' }).first();
    await tab.hover();
    await tab.locator('.codicon-close').click();
    await this.page.locator('.workspace-trust-editor').first().waitFor({ state: 'hidden', timeout: this.timeoutMs });
  }

  /** The folder the run opened first (an empty folder with `expbench.datasets` set). */
  initialFolder = '';

  /** Waits until the workbench has rendered its activity bar and status bar. */
  async ready(): Promise<void> {
    await this.page.locator('.monaco-workbench .part.activitybar').waitFor({ state: 'visible', timeout: 90_000 });
    await this.page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: this.timeoutMs });
  }

  /** Runs a command the way a user does: F1, type its title, pick the row that shows it. */
  async runCommand(title: string): Promise<void> {
    const widget = this.page.locator('.quick-input-widget');
    await this.page.locator('.monaco-workbench').click({ position: { x: 5, y: 5 }, trial: true }).catch(() => undefined);
    await this.page.keyboard.press('F1');
    await widget.waitFor({ state: 'visible', timeout: this.timeoutMs });
    const input = widget.locator('input');
    await input.fill(`>${title}`);
    const row = widget.locator('.monaco-list-row').filter({ has: this.page.locator('.label-name', { hasText: asRegExp(title) }) }).first();
    await row.waitFor({ state: 'visible', timeout: this.timeoutMs }).catch(async (e: unknown) => {
      const value = await input.inputValue().catch(() => '?');
      throw new Error(`runCommand: no palette row "${title}" (typed ${JSON.stringify(value)}; rows: ${await listedRows(widget)}): ${firstLine(e)}`);
    });
    await row.click();
    await widget.waitFor({ state: 'hidden', timeout: this.timeoutMs });
  }

  /** Opens a view container from the activity bar by its title (e.g. "EXP-Bench"). */
  async openViewContainer(title: string): Promise<void> {
    const tab = this.page.locator('.part.activitybar').getByRole('tab', { name: new RegExp(`^${escapeRe(title)}\\b`) }).first();
    await tab.waitFor({ state: 'visible', timeout: this.timeoutMs });
    if ((await tab.getAttribute('aria-selected')) !== 'true') await tab.click();
    await this.page.locator('.part.sidebar').waitFor({ state: 'visible', timeout: this.timeoutMs });
  }

  /** The tree rows in the side bar whose visible label matches. */
  treeItems(label: LabelMatch): Locator {
    return this.page.locator('.part.sidebar .monaco-list-row[role="treeitem"]').filter({
      has: this.page.locator('.monaco-icon-label .label-name', { hasText: asRegExp(label) }),
    });
  }

  /**
   * The first side-bar tree row whose label matches, scrolling the (virtualised) trees of the side
   * bar until it is rendered: every tree shown, one wheel step each per round (first to the top,
   * then down; each tree turns at its own ends), since the row's tree is not known and views
   * show, collapse and reflow while the workbench settles (the last tree in the DOM was once a
   * Run Sets view collapsing under the hover). Throws naming the label after `timeoutMs`.
   */
  async treeItem(label: LabelMatch): Promise<Locator> {
    const row = this.treeItems(label).first();
    const deadline = Date.now() + this.timeoutMs;
    const directions = new Map<string, number>(); // per tree (its aria-label): -1 up, 1 down
    while (Date.now() < deadline) {
      if (await row.isVisible()) {
        await row.scrollIntoViewIfNeeded();
        return row;
      }
      const trees = this.page.locator('.part.sidebar .monaco-list[role="tree"]:visible');
      const n = await trees.count();
      if (n === 0) await this.page.waitForTimeout(200);
      for (let i = 0; i < n && !(await row.isVisible()); i++) {
        const tree = trees.nth(i);
        const name = (await tree.getAttribute('aria-label', { timeout: 1000 }).catch(() => null)) ?? String(i);
        const rowsStyle = () => tree.locator('.monaco-list-rows').first().getAttribute('style', { timeout: 1000 }).catch(() => '');
        if (!(await tree.hover({ timeout: 2000 }).then(() => true, () => false))) continue; // hidden meanwhile: the next round finds the trees again
        const before = await rowsStyle();
        const direction = directions.get(name) ?? -1;
        await this.page.mouse.wheel(0, direction * 400);
        await this.page.waitForTimeout(150);
        if (before === await rowsStyle()) directions.set(name, -direction); // reached an end: go the other way
      }
    }
    throw new Error(`no tree item labelled ${String(label)} in the side bar within ${this.timeoutMs} ms`);
  }

  /**
   * Expands the tree row with this label (no-op when already expanded) and returns it once it says
   * `aria-expanded="true"`. A tree that re-renders (a refresh reading its data again) replaces its
   * rows, and a click on a replaced row is lost: the row is found again and clicked again until it
   * is expanded (each click is followed by a check of the state, never by a fixed wait).
   * @throws Error naming the label when it is not expanded within `timeoutMs`
   */
  async expandTreeItem(label: LabelMatch): Promise<Locator> {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const row = await this.treeItem(label);
      if ((await row.getAttribute('aria-expanded').catch(() => null)) === 'true') return row;
      await row.click().catch(() => undefined); // the row may be replaced under the click
      const expanded = await this.page.waitForFunction(
        (el) => !el?.isConnected || el.getAttribute('aria-expanded') === 'true',
        await row.elementHandle().catch(() => null),
        { timeout: 2000 },
      ).then(() => true, () => false);
      if (expanded && (await row.getAttribute('aria-expanded').catch(() => null)) === 'true') return row;
      if (Date.now() > deadline) throw new Error(`the tree row ${String(label)} did not expand within ${this.timeoutMs} ms`);
    }
  }

  /**
   * Waits until the workbench has read the contributions of the extension whose view container is
   * titled `title` (its activity-bar entry is shown): its menus, commands and views are registered.
   */
  async extensionContributed(title: string): Promise<void> {
    await this.page.locator('.part.activitybar').getByRole('tab', { name: new RegExp(`^${escapeRe(title)}\\b`) }).first()
      .waitFor({ state: 'visible', timeout: this.timeoutMs });
  }

  /** Expands each label in turn (conference → paper → …) and returns the last row (not expanded). */
  async revealTreePath(labels: LabelMatch[]): Promise<Locator> {
    for (const l of labels.slice(0, -1)) await this.expandTreeItem(l);
    return this.treeItem(labels[labels.length - 1]);
  }

  /**
   * Right-clicks `target` (a list or tree row) and picks the context-menu entry with this title.
   * The workbench closes an open context menu whenever its layout changes (VS Code 1.100's
   * `ContextView.layout` hides a menu shown with `canRelayout: false`: the "Restricted Mode" banner
   * that Workspace Trust shows once it has settled, a panel opening) and when the menu loses focus;
   * the same layout change can move the rows under a right-click on its way. So each attempt waits
   * for the menu to show the entry AND for `target` to be the row the menu is for (the list focuses
   * the row it opens a context menu on), and only then clicks the entry; a menu that closed, or that
   * opened on another row, is closed and opened again on `target`, as a user would, until the
   * harness's timeout.
   * The entry's click counts when the menu closes after it (a click the menu did not take is
   * repeated on the entry); with `done`, only when `done()` also holds within 10 s of it (a menu
   * closed by a layout change at the moment of the click never ran its action): else the menu is
   * opened again. Name `done` for an entry whose effect the test waits for.
   * @returns `performance.now()` just before the entry's click that landed (for a test that times what the entry starts)
   * @throws Error naming the entry and the last reason after `timeoutMs`
   */
  async contextMenu(target: Locator, entry: LabelMatch, done?: () => Promise<boolean>): Promise<number> {
    const item = this.page.locator('.monaco-menu .action-item').filter({ has: this.page.locator('.action-label', { hasText: asRegExp(entry) }) }).first();
    const deadline = Date.now() + this.timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      const left = Math.max(1000, deadline - Date.now());
      try {
        // a bounded attempt: a row that cannot take the click now (covered by a hover, moving) is tried again, not waited on for the whole budget
        await target.click({ button: 'right', timeout: Math.min(left, 5_000) });
        await item.waitFor({ state: 'visible', timeout: Math.min(left, 10_000) });
        const forTarget = await target.evaluate((row) => row.classList.contains('focused'), undefined, { timeout: 2000 });
        if (!forTarget) throw new Error('the menu opened on another row (the rows moved under the right-click)');
        // The entry's click is taken when the menu closes (it runs the action and hides): a click the
        // menu did not take (seen under load: the menu stayed open on its row for a minute) is repeated
        // on the entry while the menu still shows it, never counted as done.
        const menu = this.page.locator('.monaco-menu').first();
        for (;;) {
          const at = performance.now();
          await item.click({ timeout: Math.min(Math.max(1000, deadline - Date.now()), 5_000) });
          if (await menu.waitFor({ state: 'hidden', timeout: 5_000 }).then(() => true, () => false)) {
            if (!done || await until('the context menu entry took effect', async () => (await done()) || undefined, 10_000).then(() => true, () => false)) return at;
            throw new Error('the menu closed, but its entry did not take effect within 10 s');
          }
          if (Date.now() >= deadline || !(await item.isVisible().catch(() => false))) throw new Error('the menu did not close after its entry was clicked');
        }
      } catch (e) {
        last = e;
        // any menu still open (also one without the entry, opened on another row) blocks the next right-click
        const menu = this.page.locator('.monaco-menu').first();
        if (await menu.isVisible().catch(() => false)) await this.page.keyboard.press('Escape').catch(() => undefined);
        await menu.waitFor({ state: 'hidden', timeout: 5_000 }).catch(() => undefined);
        await this.dismissHovers().catch(() => undefined);
      }
    }
    throw new Error(`context menu entry ${String(entry)} not clicked within ${this.timeoutMs} ms: ${firstLine(last)}`);
  }

  /**
   * The content frame of the webview whose panel title is `title`. VS Code nests two iframes:
   * the host frame (`iframe.webview`) and the content frame (`#active-frame`, title = panel title).
   * @param ms how long to wait, in milliseconds (default `timeoutMs`)
   */
  async webviewFrame(title: LabelMatch, ms = this.timeoutMs): Promise<Frame> {
    const want = asRegExp(title);
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      for (const frame of this.page.frames()) {
        if (frame.name() !== 'active-frame' && !frame.url().includes('fake.html')) continue;
        const el = await frame.frameElement().catch(() => undefined);
        const t = await el?.getAttribute('title').catch(() => null);
        if (t != null && want.test(t) && (await el!.isVisible().catch(() => false))) return frame;
      }
      await this.page.waitForTimeout(200);
    }
    const titles = await Promise.all(this.page.frames().map(async (f) => (await f.frameElement().catch(() => undefined))?.getAttribute('title')));
    throw new Error(`no visible webview titled ${String(title)} within ${ms} ms (frames: ${titles.filter(Boolean).join(', ') || 'none'})`);
  }

  /**
   * Clicks the side-bar tree row labelled `label` until the webview titled `title` shows, and
   * returns its frame: a tree that re-renders as its data changes (a run set's view while units
   * run) replaces its rows, and a click on a replaced row is lost. Each click is followed by a
   * wait for the webview, never by a fixed pause; a click that did register only reveals it again.
   * @throws Error naming both when the webview does not show within `timeoutMs`
   */
  async webviewFromTreeItem(label: LabelMatch, title: LabelMatch): Promise<Frame> {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      await (await this.treeItem(label)).click().catch(() => undefined); // the row may be replaced under the click
      const frame = await this.webviewFrame(title, 5000).catch(() => undefined);
      if (frame) return frame;
      if (Date.now() > deadline) throw new Error(`the tree row ${String(label)} did not open the webview ${String(title)} within ${this.timeoutMs} ms`);
    }
  }

  /** Waits until `text` is visible in `scope` (page by default); returns its locator. */
  async waitForText(text: LabelMatch, scope: Page | Frame | Locator = this.page): Promise<Locator> {
    const loc = scope.getByText(text).first();
    await loc.waitFor({ state: 'visible', timeout: this.timeoutMs });
    return loc;
  }

  /**
   * Shows the Problems panel and returns it; with `maximized`, the panel fills the editor area
   * (room for every row: its list is virtualised, rows out of view are not in the DOM). Reads the
   * window's state first (the panel shown; the editor part hidden when maximized) rather than
   * toggling blind, so it holds whatever an earlier test left. Ctrl+Shift+M opens and focuses the
   * panel when it is not shown and focused (it closes it only then).
   */
  async problemsPanel(o: { maximized?: boolean } = {}): Promise<Locator> {
    const panel = this.page.locator('.part.panel .markers-panel');
    if (!(await panel.isVisible())) await this.page.keyboard.press('Control+Shift+M');
    await panel.waitFor({ state: 'visible', timeout: this.timeoutMs });
    if (o.maximized !== undefined) await this.maximizePanel(o.maximized);
    return panel;
  }

  /** Maximizes the panel (`on`) or restores its size, unless it already is so; waits for the editor part to hide or show. */
  async maximizePanel(on: boolean): Promise<void> {
    const editor = this.page.locator('.part.editor');
    const maximized = !(await editor.isVisible());
    if (maximized !== on) await this.runCommand('View: Toggle Maximized Panel');
    await editor.waitFor({ state: on ? 'hidden' : 'visible', timeout: this.timeoutMs });
  }

  /** Every editor tab: its title and whether it is a preview tab (italic; replaced by the next file opened with a single click). */
  async editorTabs(): Promise<Array<{ title: string; preview: boolean }>> {
    return this.page.locator('.part.editor .tab').evaluateAll((els) => els.map((e) => ({
      title: (e.querySelector('.label-name')?.textContent ?? '').trim(),
      preview: e.classList.contains('preview') || e.querySelector('.italic') !== null,
    })));
  }

  /** The title of the active editor tab ('' when none). */
  async activeEditorTitle(): Promise<string> {
    const tab = this.page.locator('.part.editor .tab.active .label-name').first();
    return (await tab.isVisible()) ? (await tab.innerText()).trim() : '';
  }

  /** Moves the mouse off trees and toolbars (to the editor area) so no hover covers the UI. */
  async dismissHovers(): Promise<void> {
    const editor = await this.page.locator('.part.editor').boundingBox();
    const vp = this.page.viewportSize() ?? { width: 800, height: 600 };
    await this.page.mouse.move(editor ? editor.x + editor.width - 20 : vp.width - 20, editor ? editor.y + editor.height - 20 : vp.height / 2);
    await this.page.locator('.workbench-hover-container, .monaco-hover:not(.hidden)').first()
      .waitFor({ state: 'hidden', timeout: 3000 }).catch(() => undefined);
  }

  /** Saves a PNG of the page as `<screenshotsDir>/<name>.png` (hovers dismissed); returns its path. */
  async screenshot(name: string): Promise<string> {
    await this.dismissHovers();
    fs.mkdirSync(this.screenshotsDir, { recursive: true });
    const file = path.join(this.screenshotsDir, `${name.replace(/[^\w.-]+/g, '_')}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /** The code-server URL that opens `folder` (throws without a URL builder, see openFolder). */
  folderUrl(folder: string): string {
    if (!this.urlFor) throw new Error('this Workbench cannot open folders (constructed without a URL builder)');
    return this.urlFor(folder);
  }

  /**
   * Opens `folder` in a NEW browser context of the same browser (a second window) and returns its
   * workbench; close `context` to end that window (e.g. abruptly, to simulate a killed window).
   */
  async openFolderInNewContext(folder: string): Promise<{ workbench: Workbench; context: BrowserContext }> {
    const browser = this.page.context().browser();
    if (!browser) throw new Error('the page has no browser to open a second context in');
    const context = await browser.newContext({ viewport: this.page.viewportSize() ?? { width: 1600, height: 1000 } });
    const page = await context.newPage();
    await page.goto(this.folderUrl(folder), { waitUntil: 'domcontentloaded', timeout: 90_000 });
    const workbench = new Workbench(page, this.screenshotsDir, this.timeoutMs, this.urlFor);
    workbench.initialFolder = this.initialFolder;
    await workbench.ready();
    await workbench.extensionContributed('EXP-Bench');
    return { workbench, context };
  }

  /** Runs "Developer: Reload Window" and waits until the reloaded workbench is ready. */
  async reloadWindow(): Promise<void> {
    const nav = this.page.waitForEvent('framenavigated', { predicate: (f) => f === this.page.mainFrame(), timeout: 60_000 });
    await this.runCommand('Developer: Reload Window');
    await nav;
    await this.ready();
  }

  /**
   * Creates a file (and its folders) at `relPath` in the first workspace folder with the
   * Explorer's "New File..." box, the way a user does; the new file opens in the editor.
   */
  async newFileInExplorer(relPath: string): Promise<void> {
    await this.page.keyboard.press('Control+Shift+E');
    const explorer = this.page.locator('.part.sidebar .explorer-folders-view');
    await explorer.waitFor({ state: 'visible', timeout: this.timeoutMs });
    await this.page.locator('.part.sidebar').hover();
    await this.page.locator('.part.sidebar .action-label[aria-label^="New File"]').first().click();
    const box = this.page.locator('.part.sidebar .explorer-item-edited input, .part.sidebar .monaco-inputbox input').first();
    await box.waitFor({ state: 'visible', timeout: this.timeoutMs });
    await box.fill(relPath);
    await box.press('Enter');
    await this.page.locator('.part.editor .tab.active .label-name', { hasText: path.posix.basename(relPath) })
      .waitFor({ state: 'visible', timeout: this.timeoutMs });
  }

  /** Opens a workspace file by its relative path with Quick Open (Ctrl+P). */
  async quickOpen(relPath: string): Promise<void> {
    const widget = this.page.locator('.quick-input-widget');
    await this.page.keyboard.press('Control+P');
    await widget.waitFor({ state: 'visible', timeout: this.timeoutMs });
    await widget.locator('input').fill(relPath);
    const row = widget.locator('.monaco-list-row').filter({ hasText: path.posix.basename(relPath) }).first();
    await row.waitFor({ state: 'visible', timeout: this.timeoutMs });
    await widget.locator('input').press('Enter');
    await widget.waitFor({ state: 'hidden', timeout: this.timeoutMs });
    await this.page.locator('.part.editor .tab.active .label-name', { hasText: path.posix.basename(relPath) })
      .waitFor({ state: 'visible', timeout: this.timeoutMs });
  }

  /**
   * Replaces the whole text of the active editor with `text` the way a user pastes it (select all,
   * Ctrl+V from the clipboard: no auto-indent or auto-closing), then saves it with Ctrl+S and
   * waits until the tab is not dirty. The file may reach the disk a moment later: poll it.
   */
  async replaceActiveEditorText(text: string): Promise<void> {
    await this.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(this.page.url()).origin });
    await this.page.evaluate((t) => navigator.clipboard.writeText(t), text);
    const editor = this.page.locator('.part.editor .editor-group-container.active .monaco-editor .view-lines').first();
    await editor.click();
    await this.page.keyboard.press('Control+A');
    await this.page.keyboard.press('Control+V');
    await this.page.keyboard.press('Control+S');
    await this.page.locator('.part.editor .tab.active.dirty').waitFor({ state: 'detached', timeout: this.timeoutMs });
  }

  /**
   * Picks `file` (absolute) in code-server's own file dialog (a path box in a quick input, VS Code's
   * simple file dialog), the way a user types it, and waits until the dialog has accepted it. Each
   * step waits on the dialog's state: it has listed its first folder (and filled it in) before the
   * path is typed; it lists the file's folder (the file is one of its rows) before Enter (an Enter
   * while it still lists another folder only navigates to the typed one, and the dialog stays
   * open); then it closes.
   */
  async chooseInFileDialog(file: string): Promise<void> {
    const widget = this.page.locator('.quick-input-widget');
    const input = widget.locator('input');
    await widget.locator('.monaco-list-row', { hasText: '..' }).first().waitFor({ state: 'visible', timeout: this.timeoutMs });
    await this.page.waitForFunction((el) => (el as HTMLInputElement).value.endsWith('/'), await input.elementHandle(), { timeout: this.timeoutMs });
    await input.fill(file);
    const name = path.posix.basename(file);
    await widget.locator('.monaco-list-row .label-name', { hasText: asRegExp(name) }).first().waitFor({ state: 'visible', timeout: this.timeoutMs });
    await this.page.waitForFunction(([el, want]) => (el as HTMLInputElement).value === want, [await input.elementHandle(), file] as const, { timeout: this.timeoutMs });
    await input.press('Enter');
    await widget.waitFor({ state: 'hidden', timeout: this.timeoutMs });
  }

  /**
   * Chooses `folder` (absolute, existing) in code-server's own folder dialog (VS Code's simple file
   * dialog for `canSelectFolders`) the way a user does: types the parent with its trailing slash and
   * waits until the dialog lists it (the folder is one of its rows), types the folder with its
   * trailing slash and waits until the dialog lists that folder (its own row is gone, `..` is
   * there), then presses Enter with no row active (Enter on an active folder row, or on a path
   * without the slash that the dialog has completed to a row, only navigates into it and the dialog
   * stays open), and waits until the dialog closes. When `shot` is given, a screenshot of the dialog
   * just before Enter is saved under that name (see `screenshot`).
   * @throws Error when `folder` holds a subfolder of its own name (the listing would not tell the two apart)
   */
  async chooseFolderInFileDialog(folder: string, shot?: string): Promise<void> {
    const name = path.posix.basename(folder);
    if (fs.existsSync(path.join(folder, name))) throw new Error(`chooseFolderInFileDialog: ${folder} holds ${name}/ itself: choose another folder`);
    const widget = this.page.locator('.quick-input-widget');
    const input = widget.locator('input');
    const row = (label: string): Locator => widget.locator('.monaco-list-row').filter({ has: this.page.locator('.label-name', { hasText: asRegExp(label) }) }).first();
    const valueIs = async (want: string): Promise<void> => {
      await this.page.waitForFunction(([el, v]) => (el as HTMLInputElement).value === v, [await input.elementHandle(), want] as const, { timeout: this.timeoutMs });
    };
    // the dialog has listed its first folder and filled it in (typing earlier is overwritten by that)
    await row('..').waitFor({ state: 'visible', timeout: this.timeoutMs });
    await this.page.waitForFunction((el) => (el as HTMLInputElement).value.endsWith('/'), await input.elementHandle(), { timeout: this.timeoutMs });
    const parent = `${path.posix.dirname(folder)}/`;
    await input.fill(parent);
    await valueIs(parent);
    await row(name).waitFor({ state: 'visible', timeout: this.timeoutMs });
    await input.fill(`${folder}/`);
    await valueIs(`${folder}/`);
    await row(name).waitFor({ state: 'detached', timeout: this.timeoutMs });
    await row('..').waitFor({ state: 'visible', timeout: this.timeoutMs });
    if (shot) await this.screenshot(shot);
    await input.press('Enter');
    await widget.waitFor({ state: 'hidden', timeout: this.timeoutMs });
  }

  /** Clicks `button` (e.g. "Submit") in the modal dialog the workbench shows. */
  async confirmDialog(button: LabelMatch): Promise<void> {
    const dialog = this.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: this.timeoutMs });
    await dialog.locator('.monaco-button', { hasText: asRegExp(button) }).first().click();
    await dialog.waitFor({ state: 'hidden', timeout: this.timeoutMs });
  }
}
