// Smoke test of the extension-host tier: runs inside code-server's real extension host.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

import { EXTENSION_ID } from './extensionApi';

describe('extension host (code-server)', () => {
  it('is VS Code 1.100', () => {
    console.log(`[harness] extension host vscode.version=${vscode.version} appName=${vscode.env.appName} node=${process.version}`);
    assert.match(vscode.version, /^1\.100\./);
  });

  it(`has ${EXTENSION_ID} and activates it`, async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is not loaded (extensionDevelopmentPath must be the repo root)`);
    await ext.activate();
    assert.equal(ext.isActive, true);
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('expbench.showTaskBrief'), 'command expbench.showTaskBrief is not registered');
  });
});
