import * as assert from 'node:assert/strict';
import { briefCsp } from '../../src/extension/brief/csp';
import { makeNonce } from '../../src/extension/brief/nonce';

describe('protocol: the brief webview\'s CSP and nonce', () => {
  it('a nonce is 16 random bytes in base64, fresh on every call', () => {
    const nonces = Array.from({ length: 200 }, () => makeNonce());
    for (const n of nonces) {
      assert.match(n, /^[A-Za-z0-9+/]{22}==$/);
      assert.equal(Buffer.from(n, 'base64').length, 16);
    }
    assert.equal(new Set(nonces).size, nonces.length);
  });

  it('the policy denies by default, runs scripts only by nonce, and allows no inline or eval', () => {
    const source = 'https://file+.vscode-resource.vscode-cdn.net';
    const csp = briefCsp(source, 'abc123==');
    const directives = new Map(csp.split(/;\s*/).map((d) => { const [name, ...values] = d.trim().split(/\s+/); return [name!, values]; }));
    assert.deepEqual(directives.get('default-src'), ["'none'"]);
    assert.deepEqual(directives.get('script-src'), ["'nonce-abc123=='"]);
    assert.deepEqual(directives.get('style-src'), [source]);
    assert.deepEqual(directives.get('font-src'), [source]);
    assert.deepEqual(directives.get('img-src'), [source, 'https:', 'data:']);
    assert.deepEqual([...directives.keys()].sort(), ['default-src', 'font-src', 'img-src', 'script-src', 'style-src']);
    assert.doesNotMatch(csp, /unsafe-(inline|eval)|\*/);
  });
});
