/**
 * What the solver's window sends and the organiser's terminal prints: the attested name was taken
 * with any characters (up to 200) and printed raw by `runs status` of a campaign, so ESC, CR and
 * BEL sequences (cursor up and erase line to rewrite the board's rows, OSC 52 to set the
 * organiser's clipboard) reached the terminal. The channel now refuses control characters in a
 * name, and every cell of the board is printed through `printable` (for records written before).
 */
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatCampaignBoard } from '../../src/cli/commands/campaign';
import { METHODS } from '../../src/core/channel/protocol';
import { hasControl, printable } from '../../src/core/untrusted';

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

  it('printable: never leaves a control character, and changes nothing else (property)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (s) => {
      const p = printable(s);
      assert.ok(!hasControl(p));
      if (!hasControl(s)) assert.equal(p, s);
    }), { numRuns: 2000 });
  });
});
