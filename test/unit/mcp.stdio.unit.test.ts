import * as assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { BoundedStdioTransport, requestIdOfHead } from '../../src/core/mcp/stdio';
import { LIMITS } from '../../src/core/untrusted';

/** Everything the transport wrote, as JSON lines. */
function written(out: PassThrough): unknown[] {
  const text = (out.read() as Buffer | null)?.toString('utf8') ?? '';
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

// Issue 33 (fault round): `agent mcp` over stdio ended with status 0 and no word on one request
// line of about 20 MB (the SDK's transport closed at its 10 MB buffer). The bounded transport
// answers such a line with a JSON-RPC error and keeps serving.
describe('MCP over stdio: one line of 20 MB (mcp/stdio.ts)', function () {
  it('is answered with an error naming the limit, by its id; the next request is served; memory stays bounded', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const t = new BoundedStdioTransport(stdin, stdout);
    const got: unknown[] = [];
    let closed = false;
    t.onmessage = (m) => { got.push(m); };
    t.onclose = () => { closed = true; };
    await t.start();
    const big = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'add_note', arguments: { text: 'x'.repeat(20 * 1024 * 1024) } } });
    // in chunks, as a pipe delivers it
    for (let i = 0; i < big.length; i += 65536) stdin.write(big.slice(i, i + 65536));
    stdin.write('\n');
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: {} })}\n`);
    await new Promise((r) => setImmediate(r));
    const out = written(stdout) as Array<{ id: unknown; error?: { code: number; message: string } }>;
    assert.equal(out.length, 1);
    assert.equal(out[0].id, 7);
    assert.equal(out[0].error?.code, -32600);
    assert.match(out[0].error!.message, new RegExp(`over ${LIMITS.mcpMessageBytes.toLocaleString('en-US')} bytes`));
    assert.deepEqual(got, [{ jsonrpc: '2.0', id: 8, method: 'tools/list', params: {} }], 'the request after it is served');
    assert.equal(closed, false, 'the connection stays open');
  });

  it('a line that is not JSON-RPC is answered with a parse error; an id is found only before params', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const t = new BoundedStdioTransport(stdin, stdout);
    await t.start();
    stdin.write('{"jsonrpc":"2.0","id":"a1","method":\n');
    await new Promise((r) => setImmediate(r));
    const out = written(stdout) as Array<{ id: unknown; error?: { code: number } }>;
    assert.deepEqual(out.map((o) => [o.id, o.error?.code]), [['a1', -32700]]);
    assert.equal(requestIdOfHead('{"jsonrpc":"2.0","method":"x","params":{"id":5}'), null);
    assert.equal(requestIdOfHead('{"id": 12, "params": {}}'), 12);
  });
});
