// The settings accessor (src/extension/settings.ts) against the real VS Code configuration service.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { onDidChange, setting, type SettingKey } from '../../src/extension/settings';
import { EXTENSION_ID } from './extensionApi';

describe('settings: one accessor over the real configuration', () => {
  const config = () => vscode.workspace.getConfiguration('expbench');

  it('gives the package.json default of every contributed setting that no one set', () => {
    const props = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes.configuration.properties as Record<string, { default: unknown }>;
    let unset = 0;
    for (const [full, p] of Object.entries(props)) {
      const key = full.slice('expbench.'.length) as SettingKey;
      const i = config().inspect(key);
      assert.ok(i, `${full} is not known to VS Code`);
      assert.deepEqual(i.defaultValue, p.default, full);
      if (i.globalValue === undefined && i.workspaceValue === undefined && i.workspaceFolderValue === undefined) {
        assert.deepEqual(setting(key), p.default, full);
        unset++;
      }
    }
    assert.ok(unset >= 20, `${unset} settings left at their default`);
  });

  it('uses the default for a value of the wrong type, and tells the listeners of its section only', async () => {
    const fired: string[] = [];
    const subs = [
      onDidChange('verify', () => fired.push('verify')),
      onDidChange('judge', () => fired.push('judge')),
      onDidChange(['datasets', 'verify.timeoutSeconds'], () => fired.push('list')),
    ];
    const def = config().inspect<number>('verify.timeoutSeconds')!.defaultValue;
    try {
      await config().update('verify.timeoutSeconds', 'soon', vscode.ConfigurationTarget.Global);
      assert.equal(config().get('verify.timeoutSeconds'), 'soon', 'VS Code stores what it is given');
      assert.equal(setting('verify.timeoutSeconds'), def);
      await config().update('verify.timeoutSeconds', 90, vscode.ConfigurationTarget.Global);
      assert.equal(setting('verify.timeoutSeconds'), 90);
      for (let i = 0; i < 50 && fired.length < 4; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual([...new Set(fired)].sort(), ['list', 'verify']);
    } finally {
      await config().update('verify.timeoutSeconds', undefined, vscode.ConfigurationTarget.Global);
      subs.forEach((s) => s.dispose());
    }
  });
});
