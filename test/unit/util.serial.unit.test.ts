import * as assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { SerialChain } from '../../src/core/util/serial';

describe('util: serial chain', function () {
  it('runs tasks one after another in call order, never two at once', async () => {
    const chain = new SerialChain();
    const log: string[] = [];
    let running = 0;
    const task = (name: string, ms: number) => chain.run(async () => {
      running++;
      assert.equal(running, 1, `${name} started while another task ran`);
      log.push(`start ${name}`);
      await sleep(ms);
      log.push(`end ${name}`);
      running--;
      return name;
    });
    const results = await Promise.all([task('a', 30), task('b', 1), task('c', 10)]);
    assert.deepEqual(results, ['a', 'b', 'c']);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('a failure rejects only its own promise and does not block the next; a synchronous throw is a rejection', async () => {
    const chain = new SerialChain();
    const failed = chain.run(async () => { await sleep(5); throw new Error('first failed'); });
    const threw = chain.run(() => { throw new Error('sync'); });
    const next = chain.run(() => 'next ran');
    await assert.rejects(failed, /first failed/);
    await assert.rejects(threw, /sync/);
    assert.equal(await next, 'next ran');
  });

  it('settled waits for every task queued so far, and never rejects', async () => {
    const chain = new SerialChain();
    let done = false;
    const failing = chain.run(async () => { await sleep(5); throw new Error('x'); });
    failing.catch(() => undefined);
    void chain.run(async () => { await sleep(10); done = true; });
    await chain.settled();
    assert.equal(done, true);
    await new SerialChain().settled();
  });
});
