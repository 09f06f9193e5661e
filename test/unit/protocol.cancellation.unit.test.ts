import * as assert from 'node:assert/strict';
import { Emitter } from '../../src/core/util/emitter';
import { abortOnCancel, type CancellationLike } from '../../src/extension/cancellation';

/** A cancellation token of the shape VS Code's has, on the project's own emitter. */
function tokenSource(cancelled = false) {
  const emitter = new Emitter<void>();
  const token: CancellationLike & { isCancellationRequested: boolean } = { isCancellationRequested: cancelled, onCancellationRequested: emitter.event };
  return { token, emitter, cancel: () => { token.isCancellationRequested = true; emitter.fire(); } };
}

describe('protocol: VS Code cancellation → AbortSignal (withCancellableProgress\'s bridge)', () => {
  it('aborts the signal when the token is cancelled', () => {
    const s = tokenSource();
    const b = abortOnCancel(s.token);
    assert.equal(b.signal.aborted, false);
    s.cancel();
    assert.equal(b.signal.aborted, true);
    b.dispose();
  });

  it('a token cancelled already gives an aborted signal and registers no listener', () => {
    const s = tokenSource(true);
    const b = abortOnCancel(s.token);
    assert.equal(b.signal.aborted, true);
    assert.equal(s.emitter.size, 0);
  });

  it('dispose stops listening: no listener is left, and a later cancel does not abort', () => {
    const s = tokenSource();
    const b = abortOnCancel(s.token);
    assert.equal(s.emitter.size, 1);
    b.dispose();
    assert.equal(s.emitter.size, 0);
    s.cancel();
    assert.equal(b.signal.aborted, false);
  });
});
