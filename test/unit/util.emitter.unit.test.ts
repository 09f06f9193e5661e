import * as assert from 'node:assert/strict';
import { setLogSink, type LogLevel } from '../../src/core/log';
import { Emitter } from '../../src/core/util/emitter';

describe('util: event emitter', function () {
  let logged: { level: LogLevel; component: string; message: string }[];
  let restore: () => void;
  beforeEach(() => { logged = []; restore = setLogSink((level, component, message) => logged.push({ level, component, message })); });
  afterEach(() => restore());

  it('calls every listener with the value, in registration order; dispose of a registration removes only it', () => {
    const e = new Emitter<number>();
    const calls: string[] = [];
    e.event((v) => calls.push(`a${v}`));
    const b = e.event((v) => calls.push(`b${v}`));
    e.fire(1);
    b.dispose();
    b.dispose();
    e.fire(2);
    assert.deepEqual(calls, ['a1', 'b1', 'a2']);
    assert.equal(e.size, 1);
  });

  it('a listener that throws is logged with its component and does not stop the others; fire never throws', () => {
    const e = new Emitter<string>('session');
    const seen: string[] = [];
    e.event(() => { throw new Error('boom'); });
    e.event(() => { throw 'plain string'; });
    e.event((v) => seen.push(v));
    assert.doesNotThrow(() => e.fire('x'));
    assert.deepEqual(seen, ['x']);
    assert.equal(logged.length, 2);
    assert.ok(logged.every((l) => l.level === 'error' && l.component === 'session'));
    assert.match(logged[0].message, /boom/);
    assert.match(logged[1].message, /a listener threw: plain string/);
  });

  it('a listener added or removed during fire takes effect from the next fire', () => {
    const e = new Emitter<number>();
    const calls: string[] = [];
    let late: { dispose(): void } | undefined;
    const first = e.event((v) => { calls.push(`first${v}`); late ??= e.event((w) => calls.push(`late${w}`)); second.dispose(); });
    const second = e.event((v) => calls.push(`second${v}`));
    e.fire(1);
    e.fire(2);
    first.dispose();
    assert.deepEqual(calls, ['first1', 'second1', 'first2', 'late2']);
  });

  it('after dispose, fire calls nobody and event registers nothing', () => {
    const e = new Emitter<number>();
    const calls: number[] = [];
    e.event((v) => calls.push(v));
    e.dispose();
    e.fire(1);
    const d = e.event((v) => calls.push(v));
    e.fire(2);
    d.dispose();
    assert.deepEqual(calls, []);
    assert.equal(e.size, 0);
  });
});
