import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { EventLine, EventLog, excerpt, readEvents, SessionEventSchema, streamEvents } from '../../src/core/session/events';

describe('session events (events.jsonl)', () => {
  let dir: string;
  let file: string;
  let t = Date.parse('2026-03-01T09:00:00.000Z');
  const now = () => (t += 1000);
  beforeEach(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-events-')); file = path.join(dir, 'private', 'events.jsonl'); });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('appends one versioned, timestamped JSON line per event and never rewrites earlier lines', async () => {
    const log = new EventLog(file, now);
    await log.append({ type: 'session.opened', client: 'test', restored: false });
    const first = await fsp.readFile(file, 'utf8');
    await Promise.all([
      log.append({ type: 'phase.changed', from: 'design', to: 'implementation' }),
      log.append({ type: 'note.added', text: 'line one\nline two "quoted"' }),
      log.append({ type: 'command.run', command: 'python train.py', exitCode: 1, durationMs: 420, outputExcerpt: 'Traceback' }),
    ]);
    const text = await fsp.readFile(file, 'utf8');
    assert.ok(text.startsWith(first), 'earlier bytes unchanged');
    const lines = text.split('\n');
    assert.equal(lines.pop(), '', 'ends with a newline');
    assert.equal(lines.length, 4);
    const parsed = lines.map((l) => SessionEventSchema.parse(JSON.parse(l)));
    assert.deepEqual(parsed.map((e) => e.type), ['session.opened', 'phase.changed', 'note.added', 'command.run'], 'in call order');
    for (const e of parsed) assert.equal(e.v, 1);
    assert.ok(parsed.every((e, i) => i === 0 || e.at > parsed[i - 1].at));
  });

  it('rejects an event that fails the schema, naming the file, and writes nothing', async () => {
    const log = new EventLog(file, now);
    await assert.rejects(log.append({ type: 'phase.changed', from: 'design', to: 'nowhere' as any }), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && e.message.includes(file));
    assert.equal((await readEvents(file)).events.length, 0);
    await assert.rejects(fsp.access(file));
  });

  it('the reader tolerates and reports a torn last line; a later append does not glue onto it', async () => {
    const log = new EventLog(file, now);
    await log.append({ type: 'session.opened', client: 'test', restored: false });
    await log.append({ type: 'note.added', text: 'kept' });
    await fsp.appendFile(file, '{"v":1,"at":"2026-03-01T09:00:09.000Z","type":"note.ad'); // writer killed mid-line
    let r = await readEvents(file);
    assert.deepEqual(r.events.map((e) => e.type), ['session.opened', 'note.added']);
    assert.equal(r.invalid.length, 0);
    assert.ok(r.torn);
    assert.equal(r.torn.line, 3);
    assert.match(r.torn.text, /"type":"note\.ad$/);

    const next = new EventLog(file, now); // a new process takes over
    await next.append({ type: 'note.added', text: 'after the crash' });
    r = await readEvents(file);
    assert.deepEqual(r.events.map((e) => e.type === 'note.added' ? e.text : e.type), ['session.opened', 'kept', 'after the crash']);
    assert.equal(r.torn, undefined);
    assert.equal(r.invalid.length, 1, 'the torn line is now an invalid line of its own');
    assert.equal(r.invalid[0].line, 3);
  });

  it('streams from a byte offset, so a tailer can resume where it stopped', async () => {
    const log = new EventLog(file, now);
    for (let i = 0; i < 5; i++) await log.append({ type: 'note.added', text: `n${i}` });
    const seen: EventLine[] = [];
    for await (const l of streamEvents(file)) seen.push(l);
    assert.equal(seen.length, 5);
    const resumeAt = seen[3].offset;
    const tail: string[] = [];
    for await (const l of streamEvents(file, resumeAt)) if (l.kind === 'event' && l.event.type === 'note.added') tail.push(l.event.text);
    assert.deepEqual(tail, ['n3', 'n4']);
  });

  it('reports invalid lines (bad JSON, unknown type, other version) and keeps reading', async () => {
    await fsp.mkdir(path.dirname(file), { recursive: true });
    await fsp.writeFile(file, [
      '{"v":1,"at":"2026-03-01T09:00:00.000Z","type":"note.added","text":"a"}',
      'not json',
      '{"v":1,"at":"2026-03-01T09:00:01.000Z","type":"teleported"}',
      '{"v":2,"at":"2026-03-01T09:00:02.000Z","type":"note.added","text":"b"}',
      '',
      '{"v":1,"at":"2026-03-01T09:00:03.000Z","type":"file.deleted","path":"x.py"}',
      '',
    ].join('\n'));
    const r = await readEvents(file);
    assert.deepEqual(r.events.map((e) => e.type), ['note.added', 'file.deleted']);
    assert.deepEqual(r.invalid.map((l) => l.line), [2, 3, 4]);
    assert.match(r.invalid[0].error, /not JSON/);
    assert.equal(r.torn, undefined);
  });

  it('a listener that throws does not fail the append nor stop the other listeners', async () => {
    const log = new EventLog(file, now);
    const seen: string[] = [];
    log.onDidAppend(() => { throw new Error('a broken listener'); });
    const sub = log.onDidAppend((e) => seen.push(e.type));
    const e = await log.append({ type: 'note.added', text: 'kept' });
    assert.equal(e.type, 'note.added');
    sub.dispose();
    await log.append({ type: 'note.added', text: 'after dispose' });
    assert.deepEqual(seen, ['note.added']);
    assert.equal((await readEvents(file)).events.length, 2);
  });

  it('a missing file reads as no events', async () => {
    assert.deepEqual(await readEvents(path.join(dir, 'nope.jsonl')), { events: [], invalid: [] });
  });

  it('excerpt keeps head and tail of long output', () => {
    const long = 'A'.repeat(3000) + 'B'.repeat(3000);
    const e = excerpt(long, 1000);
    assert.ok(e.startsWith('A'.repeat(250)) && e.endsWith('B'.repeat(750)));
    assert.match(e, /\[5000 characters omitted\]/);
    assert.equal(excerpt('short', 1000), 'short');
  });
});
