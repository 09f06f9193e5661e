import * as assert from 'node:assert/strict';
import { ExpBenchError, isExpBenchError } from '../../src/core/errors';
import { errorMessage } from '../../src/core/util/errors';
import {
  HostMessageSchema, WebviewMessageSchema, type HostMessage, type Reply, type SectionAction, type WebviewMessage,
} from '../../src/protocol/messages';
import { SectionRegistry } from '../../src/protocol/registry';
import { CANCELLED, RequestClient, RequestError, RequestRunner } from '../../src/protocol/requests';

interface Panel { taskId: string }
const describeError = (e: unknown) => ({ message: errorMessage(e), ...(isExpBenchError(e) ? { code: e.code } : {}) });
const tick = () => new Promise((r) => setImmediate(r));

/**
 * Both ends wired as the brief wires them, through JSON (what postMessage carries) and the
 * protocol's schemas: webview client → host (parse, registry, runner) → webview (parse, client).
 */
function link(panel: Panel = { taskId: 't/1/0' }) {
  const toHost: WebviewMessage[] = [];
  const toWebview: HostMessage[] = [];
  const registry = new SectionRegistry<Panel>();
  const runner = new RequestRunner((m) => {
    toWebview.push(m);
    const parsed = HostMessageSchema.parse(JSON.parse(JSON.stringify(m)));
    if (parsed.type === 'reply') client.receive(parsed);
  }, describeError);
  const client: RequestClient = new RequestClient((m) => {
    toHost.push(m);
    const parsed = WebviewMessageSchema.parse(JSON.parse(JSON.stringify(m)));
    if (parsed.type === 'request') void runner.run(parsed.id, (signal) => registry.dispatch(parsed, panel, signal));
    else if (parsed.type === 'cancel') runner.cancel(parsed.id);
  });
  return { toHost, toWebview, registry, client, runner, panel };
}

describe('protocol: requests, replies and cancellation', () => {
  it('numbers requests 1, 2, 3…; the handler gets the typed call and its panel; each request gets one ok reply of its id', async () => {
    const l = link();
    const seen: Array<{ call: SectionAction<'phases'>; panel: Panel }> = [];
    l.registry.handle('phases', (call, ctx) => { seen.push({ call, panel: ctx.panel }); });
    await Promise.all([
      l.client.request('phases', { action: 'setPhase', payload: { phase: 'execution' } }),
      l.client.request('phases', { action: 'addNote', payload: { text: 'hello' } }),
      l.client.request('phases', { action: 'submit' }),
    ]);
    assert.deepEqual(l.toHost.map((m) => m.type === 'request' && m.id), [1, 2, 3]);
    assert.deepEqual(seen.map((s) => s.call), [
      { action: 'setPhase', payload: { phase: 'execution' } }, { action: 'addNote', payload: { text: 'hello' } }, { action: 'submit' },
    ]);
    assert.ok(seen.every((s) => s.panel === l.panel));
    assert.deepEqual(l.toWebview, [1, 2, 3].map((id) => ({ type: 'reply', id, ok: true })));
    assert.equal(l.client.inFlight, 0);
    assert.equal(l.runner.inFlight, 0);
  });

  it('a handler that throws: the request is rejected with the message and the ExpBenchError code, as data', async () => {
    const l = link();
    l.registry.handle('gaps', (call) => { throw new ExpBenchError('BAD_INPUT', `requirement ${call.action === 'showRequirement' ? call.payload.index : '?'}`, 'is not judged'); });
    const err = await l.client.request('gaps', { action: 'showRequirement', payload: { index: 9 } }).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof RequestError);
    assert.equal(err.message, 'requirement 9: is not judged');
    assert.equal(err.code, 'BAD_INPUT');
    assert.deepEqual(l.toWebview, [{ type: 'reply', id: 1, ok: false, error: { message: 'requirement 9: is not judged', code: 'BAD_INPUT' } }]);
  });

  it('a section without a handler gets an error reply naming it (not silence)', async () => {
    const l = link();
    await assert.rejects(l.client.request('gaps', { action: 'rerun' }), (e: RequestError) => e.code === 'BAD_INPUT' && /section gaps/.test(e.message));
    assert.equal(l.toWebview.length, 1);
  });

  it('cancel: the client rejects at once with CANCELLED and sends cancel of the same id; the handler\'s signal aborts; the host still replies once, CANCELLED', async () => {
    const l = link();
    let handlerSignal: AbortSignal | undefined;
    let finish!: () => void;
    l.registry.handle('phases', (_call, { signal }) => { handlerSignal = signal; return new Promise<void>((r) => { finish = r; }); });
    const ac = new AbortController();
    const p = l.client.request('phases', { action: 'runScript' }, { signal: ac.signal });
    await tick();
    assert.equal(handlerSignal?.aborted, false);
    ac.abort();
    await assert.rejects(p, (e: RequestError) => e.code === CANCELLED);
    assert.deepEqual(l.toHost.at(-1), { type: 'cancel', id: 1 });
    assert.equal(handlerSignal?.aborted, true);
    assert.equal(l.client.inFlight, 0);
    finish(); // the handler ends normally after its signal aborted: still a CANCELLED reply
    await tick();
    assert.deepEqual(l.toWebview, [{ type: 'reply', id: 1, ok: false, error: { message: 'cancelled', code: CANCELLED } }]);
    assert.equal(l.runner.inFlight, 0);
  });

  it('a signal aborted before the request is sent: rejected, nothing sent', async () => {
    const l = link();
    l.registry.handle('phases', () => assert.fail('must not run'));
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(l.client.request('phases', { action: 'submit' }, { signal: ac.signal }), (e: RequestError) => e.code === CANCELLED);
    assert.deepEqual(l.toHost, []);
  });

  it('cancelAll (the webview went away) aborts every running request; each gets its CANCELLED reply', async () => {
    const posted: HostMessage[] = [];
    const runner = new RequestRunner((m) => posted.push(m), describeError);
    const signals: AbortSignal[] = [];
    const wait = (signal: AbortSignal) => new Promise<void>((_r, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
    const runs = [5, 6].map((id) => runner.run(id, (signal) => { signals.push(signal); return wait(signal); }));
    assert.equal(runner.inFlight, 2);
    runner.cancelAll();
    const replies = await Promise.all(runs);
    assert.ok(signals.every((s) => s.aborted));
    assert.deepEqual(replies.map((r) => [r.id, r.ok]), [[5, false], [6, false]]);
    assert.ok(replies.every((r) => !r.ok && r.error.code === CANCELLED));
    assert.equal(posted.length, 2);
    assert.equal(runner.cancel(5), false, 'a finished request is no longer running');
  });

  it('a second request with an id still running is refused; the first is not disturbed', async () => {
    const posted: HostMessage[] = [];
    const runner = new RequestRunner((m) => posted.push(m), describeError);
    let finish!: () => void;
    const first = runner.run(4, () => new Promise<void>((r) => { finish = r; }));
    const second = await runner.run(4, () => assert.fail('must not run'));
    assert.equal(second.ok, false);
    finish();
    assert.deepEqual(await first, { type: 'reply', id: 4, ok: true });
    assert.equal(posted.length, 2);
  });

  it('a request that cannot be posted is rejected at once and not left waiting', async () => {
    const client = new RequestClient(() => { throw new Error('webview is disposed'); });
    await assert.rejects(client.request('phases', { action: 'submit' }), (e: RequestError) => /not sent: webview is disposed/.test(e.message));
    assert.equal(client.inFlight, 0);
  });

  it('a reply of an unknown or already settled id is ignored by the client', async () => {
    const sent: WebviewMessage[] = [];
    const client = new RequestClient((m) => sent.push(m));
    const p = client.request('gaps', { action: 'rerun' });
    const ok: Reply = { type: 'reply', id: 1, ok: true };
    assert.equal(client.receive({ type: 'reply', id: 2, ok: true }), false);
    assert.equal(client.receive(ok), true);
    await p;
    assert.equal(client.receive({ type: 'reply', id: 1, ok: false, error: { message: 'late' } }), false);
  });
});

describe('protocol: the host\'s section registry', () => {
  it('one handler per section: a second is refused; disposing an old registration leaves a newer one', async () => {
    const r = new SectionRegistry<Panel>();
    const calls: string[] = [];
    const first = r.handle('phases', () => { calls.push('first'); });
    assert.throws(() => r.handle('phases', () => undefined), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /section phases/.test((e as Error).message));
    first.dispose();
    r.handle('phases', () => { calls.push('second'); });
    first.dispose();
    await r.dispatch({ type: 'request', id: 1, section: 'phases', call: { action: 'submit' } }, { taskId: 't' }, new AbortController().signal);
    assert.deepEqual(calls, ['second']);
  });

  it('providers: all called in order for a panel, a throwing one does not stop the next; its error is returned; disposed ones are not called', async () => {
    const r = new SectionRegistry<Panel>();
    const calls: string[] = [];
    r.provide((p) => { calls.push(`a ${p.taskId}`); });
    const b = r.provide(() => { calls.push('b'); throw new Error('b failed'); });
    r.provide(async () => { calls.push('c'); });
    const errors = await r.provideAll({ taskId: 't/1/0' });
    assert.deepEqual(calls, ['a t/1/0', 'b', 'c']);
    assert.deepEqual(errors.map((e) => (e as Error).message), ['b failed']);
    b.dispose();
    calls.length = 0;
    assert.deepEqual(await r.provideAll({ taskId: 'x' }), []);
    assert.deepEqual(calls, ['a x', 'c']);
  });
});
