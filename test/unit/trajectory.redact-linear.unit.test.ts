// The redaction of imported logs (src/core/trajectory/redact.ts) on long hostile text: each
// pattern linear (issue 26: `password=` repeated made the prose pattern scan the rest of the word
// from every occurrence, 75 s on 360,000 characters). Ratios in one run, not absolute times.
import * as assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { redactString } from '../../src/core/trajectory/redact';

const SHAPES: Record<string, (n: number) => string> = {
  'password= repeated': (n) => 'password='.repeat(Math.ceil(n / 9)).slice(0, n),
  'password: and passwd= glued': (n) => 'password:passwd='.repeat(Math.ceil(n / 16)).slice(0, n),
  'API_KEY= glued': (n) => 'API_KEY='.repeat(Math.ceil(n / 8)).slice(0, n),
  'token = " repeated': (n) => 'token = "'.repeat(Math.ceil(n / 9)).slice(0, n),
  'Bearer repeated': (n) => 'Bearer '.repeat(Math.ceil(n / 7)).slice(0, n),
  'a long env name': (n) => `${'A_'.repeat(Math.ceil(n / 2)).slice(0, n - 6)}TOKEN=`,
};

describe('redaction of imported logs: linear on 990,000 characters (trajectory/redact.ts)', function () {
  this.timeout(120_000);
  const time = (s: string): number => { const t0 = performance.now(); redactString(s); return performance.now() - t0; };

  for (const [shape, make] of Object.entries(SHAPES)) {
    it(`${shape}: 990,000 characters at once take under five times as long as ten times 99,000 (quadratic: ten times)`, () => {
      const small = make(99_000);
      time(small); // warm-up
      let tenSmall = 0;
      for (let i = 0; i < 10; i++) tenSmall += time(small);
      const big = time(make(990_000));
      // the floor: allocation and GC of a 990,000-character string cost some ms whatever the pattern (quadratic was minutes)
      assert.ok(big < 5 * Math.max(tenSmall, 50), `${Math.round(big)} ms for 990,000 characters, ${Math.round(tenSmall)} ms for ten times 99,000`);
    });
  }

  it('still redacts what it did: a password with a digit, not one without, nor a short number', () => {
    assert.equal(redactString('login with password: hunter22 now').text, 'login with password: [REDACTED:secret] now');
    assert.equal(redactString('Password=abc,password=x1').text, 'Password=[REDACTED:secret]');
    assert.equal(redactString('the password: secret is wrong').count, 0);
    assert.equal(redactString('password=123456').count, 0);
    assert.equal(redactString(`${'password='.repeat(1000)}9`).count, 1);
  });
});
