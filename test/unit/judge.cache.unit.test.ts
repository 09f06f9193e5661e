import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AnswerCache, type CacheEntry } from '../../src/core/llm/cache';

const entry = (value: unknown): CacheEntry<unknown> => ({ value, model: 'm', promptTokens: 10, completionTokens: 2, storedAt: '2026-11-30T00:00:00.000Z' });

describe('judge: cache journal (one fsync per judgement)', function () {
  let dir: string;
  beforeEach(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-judge-cache-')); });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('keeps every answer written before a crash (no flush), and skips a torn last line', async () => {
    const a = new AnswerCache(dir);
    await a.put('k1', entry({ n: 1 }));
    await a.put('k2', entry({ n: 2 }));
    // the process "crashes" here: no flush; a power loss then tears a third line
    await fsp.appendFile(path.join(dir, 'entries.jsonl'), '{"key":"k3","entry":{"val');
    const b = new AnswerCache(dir);
    assert.deepEqual((await b.get('k1'))?.value, { n: 1 });
    assert.deepEqual((await b.get('k2'))?.value, { n: 2 });
    assert.equal(await b.get('k3'), undefined, 'a torn line is a miss');
    await b.put('k4', entry({ n: 4 }));
    await b.flush();
    const c = new AnswerCache(dir);
    assert.deepEqual((await c.get('k4'))?.value, { n: 4 }, 'an append after a torn line starts on its own line');
    assert.equal(await c.size(), 3);
  });

  it('reads entries of the one-file-per-key layout, and the last journal line of a key wins', async () => {
    const key = AnswerCache.key({ a: 1 });
    await fsp.mkdir(path.join(dir, key.slice(0, 2)), { recursive: true });
    await fsp.writeFile(path.join(dir, key.slice(0, 2), `${key}.json`), JSON.stringify(entry('old layout')));
    const a = new AnswerCache(dir);
    assert.equal((await a.get(key))?.value, 'old layout');
    await a.put('k', entry('first'));
    await a.put('k', entry('second'));
    await a.flush();
    await a.put('late', entry('after the flush')); // a call still in flight when the judgement ended
    const b = new AnswerCache(dir);
    assert.equal((await b.get('k'))?.value, 'second');
    assert.equal((await b.get('late'))?.value, 'after the flush');
    assert.equal(await b.size(), 3);
  });
});
