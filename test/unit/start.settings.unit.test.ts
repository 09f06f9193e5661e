import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'jsonc-parser';
import { ROOT } from './cli.helpers';

/**
 * The researcher window's user settings (scripts/start-settings.cjs, run by scripts/start.sh):
 * Workspace Trust stays on (an old `false` is replaced, saying so), the user's own text, comments
 * and values are kept, and a file that is no JSON object is kept beside a new one.
 */
const SCRIPT = path.join(ROOT, 'scripts', 'start-settings.cjs');
function run(file: string, ...args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => execFile(process.execPath, [SCRIPT, file, ...args], { cwd: ROOT }, (err, _out, stderr) => resolve({ code: err ? 1 : 0, stderr })));
}

describe('start.sh user settings (scripts/start-settings.cjs)', () => {
  let tmp: string;
  beforeEach(async () => { tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-start-settings-')); });
  afterEach(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  it('replaces an old "security.workspace.trust.enabled": false, says so, and keeps the comments and the user\'s values', async () => {
    const file = path.join(tmp, 'settings.json');
    await fsp.writeFile(file, '{\n  // my font\n  "editor.fontSize": 15,\n  "security.workspace.trust.enabled": false,\n  "telemetry.telemetryLevel": "all",\n}\n');
    const r = await run(file, path.join(tmp, 'no-dataset'), 'my/sandbox:2');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /"security\.workspace\.trust\.enabled": false was replaced by true/);
    const text = await fsp.readFile(file, 'utf8');
    assert.match(text, /\/\/ my font/);
    const s = parse(text) as Record<string, unknown>;
    assert.equal(s['security.workspace.trust.enabled'], true);
    assert.equal(s['security.workspace.trust.startupPrompt'], 'never');
    assert.equal(s['editor.fontSize'], 15);
    assert.equal(s['telemetry.telemetryLevel'], 'all', 'the user\'s own value stays');
    assert.equal(s['expbench.image'], 'my/sandbox:2');
    assert.equal('expbench.datasets' in s, false, 'a dataset folder that does not exist is not added');
    const again = await run(file);
    assert.equal(again.stderr, '', 'nothing to say the second time');
  });

  it('sets expbench.sessionsDir to the folder of start.sh\'s session (a user setting), keeps the user\'s own and then says where that session is', async () => {
    const file = path.join(tmp, 'settings.json');
    const start = path.join(tmp, 'start');
    assert.equal((await run(file, path.join(tmp, 'no-dataset'), '', start)).code, 0);
    const s = parse(await fsp.readFile(file, 'utf8')) as Record<string, unknown>;
    assert.equal(s['expbench.sessionsDir'], start);
    assert.equal('expbench.image' in s, false, 'an empty image is no setting');
    assert.equal((await run(file, path.join(tmp, 'no-dataset'), '', start)).stderr, '', 'the same folder again: nothing to say');
    const own = path.join(tmp, 'own.json');
    await fsp.writeFile(own, '{ "expbench.sessionsDir": "/home/me/my-sessions" }\n');
    const r = await run(own, path.join(tmp, 'no-dataset'), '', start);
    assert.equal((parse(await fsp.readFile(own, 'utf8')) as Record<string, unknown>)['expbench.sessionsDir'], '/home/me/my-sessions', 'the user\'s own value stays');
    assert.match(r.stderr, /"expbench\.sessionsDir" is "\/home\/me\/my-sessions" \(kept\): start\.sh's session in .*start is not in the Results and Trajectories views/);
  });

  it('writes a new file, and keeps a file that is no JSON object beside the new one', async () => {
    const fresh = path.join(tmp, 'User', 'settings.json');
    assert.equal((await run(fresh, tmp)).code, 0);
    assert.deepEqual((parse(await fsp.readFile(fresh, 'utf8')) as Record<string, unknown>)['expbench.datasets'], [tmp]);
    const broken = path.join(tmp, 'broken.json');
    await fsp.writeFile(broken, '["security.workspace.trust.enabled", false]');
    const r = await run(broken);
    assert.match(r.stderr, /not a JSON object/);
    assert.equal((parse(await fsp.readFile(broken, 'utf8')) as Record<string, unknown>)['security.workspace.trust.enabled'], true);
    const kept = (await fsp.readdir(tmp)).filter((f) => f.startsWith('broken.json.unreadable-'));
    assert.equal(kept.length, 1);
    assert.equal(await fsp.readFile(path.join(tmp, kept[0]), 'utf8'), '["security.workspace.trust.enabled", false]');
  });
});
