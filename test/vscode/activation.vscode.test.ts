// Smoke test of the extension-host tier: runs inside code-server's real extension host.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

import { EXTENSION_ID, activationApi } from './extensionApi';

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

  it('routes every command package.json contributes to a handler of the workbench (dist/workbench.js, loaded on first use)', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const contributed = (ext.packageJSON.contributes.commands as { command: string }[]).map((c) => c.command);
    assert.ok(contributed.includes('expbench.runVerifier') && contributed.includes('expbench.showTaskBrief'), contributed.join(', '));
    const a = await activationApi();
    assert.equal(typeof a.activationMs, 'number');
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepEqual(contributed.filter((id) => !registered.has(id)), [], 'contributed commands without a stub');
    await a.workbench();
    assert.deepEqual(a.unhandledCommands(), []);
    assert.equal(typeof a.workbenchLoadMs(), 'number');
    // through a stub into the workbench's handler: refreshGaps answers undefined on a window with no judged session
    assert.equal(await vscode.commands.executeCommand('expbench.refreshGaps'), undefined);
  });
});
