// Issue 13 in the researcher window (real code-server extension host): the "Start Proctored
// Baseline…" command and the "Not proctored" status bar item of researcher mode.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CODE_SERVER_ENTRY } from '../../src/core/proctor/editor';
import { codeServerInstallOf, notProctoredStatus } from '../../src/extension/proctorCommand';
import { EXTENSION_ID, activationApi } from './extensionApi';

const COMMAND = 'expbench.startProctoredBaseline';

describe('proctored baseline in the researcher window (issue 13)', () => {
  it('"Start Proctored Baseline…" is contributed, on the task rows\' menu, registered and handled by the workbench', async () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes;
    const cmd = (pkg.commands as { command: string; title: string; category?: string }[]).find((c) => c.command === COMMAND);
    assert.ok(cmd, `${COMMAND} is not contributed`);
    assert.equal(`${cmd.category}: ${cmd.title}`, 'EXP-Bench: Start Proctored Baseline…');
    const rowMenu = (pkg.menus['view/item/context'] as { command: string; when: string }[]).find((m) => m.command === COMMAND);
    assert.ok(rowMenu && /view == expbench\.tasks/.test(rowMenu.when) && /viewItem =~ \/\^task\//.test(rowMenu.when), JSON.stringify(rowMenu));
    const a = await activationApi();
    await a.workbench();
    assert.ok((await vscode.commands.getCommands(true)).includes(COMMAND), `${COMMAND} is not registered`);
    assert.ok(!a.unhandledCommands().includes(COMMAND), 'the stub has no workbench handler');
  });

  it('the "Not proctored" item points at that command and names it as the palette shows it', async () => {
    const item = notProctoredStatus(Promise.resolve(true)) as vscode.StatusBarItem;
    try {
      assert.equal(item.id, 'expbench.notProctored');
      assert.match(item.text, /Not proctored/);
      assert.equal(item.command, COMMAND);
      assert.ok((await vscode.commands.getCommands(true)).includes(item.command as string));
      assert.match(String(item.tooltip), /"EXP-Bench: Start Proctored Baseline…"/);
    } finally {
      item.dispose();
    }
  });

  it('this window runs from a code-server install that the proctored container can mount (vscode.env.appRoot)', () => {
    const install = codeServerInstallOf(vscode.env.appRoot);
    assert.ok(install, `appRoot ${vscode.env.appRoot} is not inside a code-server install`);
    assert.ok(existsSync(path.join(install, CODE_SERVER_ENTRY)), `${install} has no ${CODE_SERVER_ENTRY}`);
  });
});
