// The extension under test, as the vscode-tier tests reach it (one place for its id and activation).
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ExtensionApi } from '../../src/extension/extension';
import type { WorkbenchApi } from '../../src/extension/workbench';

/** `<publisher>.<name>` from package.json. */
export const EXTENSION_ID = 'expbench.expbench-workbench';

/** Activates the extension (a no-op when already active) and returns what its activation stage returns. */
export async function activationApi(): Promise<ExtensionApi> {
  const ext = vscode.extensions.getExtension<ExtensionApi>(EXTENSION_ID);
  assert.ok(ext, 'extension not found');
  return ext.activate();
}

/** Activates the extension, loads its workbench (dist/workbench.js) and returns the workbench's API. */
export async function api(): Promise<WorkbenchApi> {
  return (await activationApi()).workbench();
}
