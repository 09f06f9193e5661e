// The extension under test, as the vscode-tier tests reach it (one place for its id and activation).
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ExtensionApi } from '../../src/extension/extension';

/** `<publisher>.<name>` from package.json. */
export const EXTENSION_ID = 'expbench.expbench-workbench';

/** Activates the extension (a no-op when already active) and returns its API; fails when it is not loaded. */
export async function api(): Promise<ExtensionApi> {
  const ext = vscode.extensions.getExtension<ExtensionApi>(EXTENSION_ID);
  assert.ok(ext, 'extension not found');
  return ext.activate();
}
