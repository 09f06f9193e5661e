import * as vscode from 'vscode';

/**
 * A read-only custom editor provider registered at activation that forwards to the real one once
 * the workbench has loaded (VS Code needs the provider registered when it activates the
 * extension for `onCustomEditor:`). The editor shows a loading page meanwhile.
 */
export class LazyCustomEditor<D extends vscode.CustomDocument> implements vscode.CustomReadonlyEditorProvider<D> {
  constructor(private readonly real: () => Promise<vscode.CustomReadonlyEditorProvider<D>>) {}

  async openCustomDocument(uri: vscode.Uri, context: vscode.CustomDocumentOpenContext, token: vscode.CancellationToken): Promise<D> {
    return (await this.real()).openCustomDocument(uri, context, token);
  }

  async resolveCustomEditor(document: D, panel: vscode.WebviewPanel, token: vscode.CancellationToken): Promise<void> {
    return (await this.real()).resolveCustomEditor(document, panel, token);
  }
}

/** A URI handler registered at activation (`onUri`) that forwards to the workbench's. */
export function lazyUriHandler(real: () => Promise<{ handleUri(uri: vscode.Uri): Promise<void> }>): vscode.UriHandler {
  return {
    handleUri: (uri) => {
      void real().then((h) => h.handleUri(uri)).catch((e: unknown) => void vscode.window.showErrorMessage(`EXP-Bench: cannot open ${uri.toString()}: ${e instanceof Error ? e.message : String(e)}`));
    },
  };
}
