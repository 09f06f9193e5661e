/**
 * What the solver's window sends and the organiser's terminal prints: the attested name was taken
 * with any characters (up to 200) and printed raw by `runs status` of a campaign, so ESC, CR and
 * BEL sequences (cursor up and erase line to rewrite the board's rows, OSC 52 to set the
 * organiser's clipboard) reached the terminal. The channel now refuses control characters in a
 * name, and every cell of the board is printed through `printable` (for records written before).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { formatCampaignBoard } from '../../src/cli/commands/campaign';
import { METHODS } from '../../src/core/channel/protocol';
import { hasControl, printable } from '../../src/core/untrusted';
import { cli } from './cli.helpers';

const ATTACK = 'ana\x1b[2K\r\x1b[1A\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[31mFAKE submitted \u202e\u2066\x9b';

describe('trust: text from the solver\'s side on the organiser\'s terminal', () => {
  it('the channel refuses an attested name with control characters, naming why; an ordinary name (accents, CJK, emoji) passes', () => {
    const r = METHODS.attest.params.safeParse({ baseliner: ATTACK, rules: [] });
    assert.equal(r.success, false);
    assert.match(JSON.stringify(r.error?.issues), /without control characters/);
    for (const name of ['Ana Ruiz', 'José Núñez-Ölçer', '李小龍', 'bo 🙂', 'O\'Brien\ttab']) assert.equal(METHODS.attest.params.safeParse({ baseliner: name, rules: [] }).success, true, name);
  });

  it('the board prints a recorded name with control characters as escapes: no ESC, CR, BEL or bidi control reaches the terminal', () => {
    const text = formatCampaignBoard('c', [{ person: 'ana', task: 'sample/toycal/0', session: 's', status: 'submitted', opened: true, workingMs: 60_000, pauses: 0, paused: false, submitted: true, gaveUp: false, attestedAs: ATTACK }]);
    assert.ok(!hasControl(text.replace(/\n/g, '')), JSON.stringify(text));
    assert.match(text, /ana\\x1b\[2K\\x0d\\x1b\[1A\\x1b\]52;c;ZWNobyBwd25lZA==\\x07/);
    assert.match(text, /\\u202e\\u2066\\x9b/);
  });

  it('the CLI\'s messages quote a file\'s bytes escaped: report of a broken judge file, traj show of a step with escapes', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-terminal-'));
    try {
      const bad = path.join(dir, 'bad.json');
      fs.writeFileSync(bad, '{"a":\x1b]0;TITLE\x07\x1b[41m}');
      const r = await cli(['report', bad]);
      assert.match(r.stderr, /skipped .*bad\.json: not JSON/);
      assert.ok(!hasControl(r.stderr.replace(/\n/g, '')), JSON.stringify(r.stderr));
      const traj = path.join(dir, 'mini.traj.json');
      fs.writeFileSync(traj, JSON.stringify({ info: { exit_status: 'Submitted' }, messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'task' }, { role: 'assistant', content: 'THOUGHT \x1b[2J\x1b]52;c;eA==\x07\n```bash\necho hi\n```' }, { role: 'user', content: '<returncode>0</returncode>\n<output>\x1b[31mred\n</output>' }], trajectory_format: 'mini-swe-agent-1' }));
      const t = await cli(['traj', 'show', traj]);
      assert.equal(t.code, 0, t.stderr);
      assert.match(t.stdout, /\\x1b\[2J/);
      assert.ok(!hasControl(t.stdout.replace(/\n/g, '')), JSON.stringify(t.stdout));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('printable: never leaves a control character, and changes nothing else (property)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (s) => {
      const p = printable(s);
      assert.ok(!hasControl(p));
      if (!hasControl(s)) assert.equal(p, s);
    }), { numRuns: 2000 });
  });
});
