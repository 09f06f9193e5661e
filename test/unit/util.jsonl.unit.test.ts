import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { JsonLinesWriter, parseJsonLine, readJsonLines, readLines, splitLines, streamLines, type RawLine } from '../../src/core/util/jsonl';

/** The lines of `text` worked out independently of the splitter: String.split and byte lengths. */
function expected(text: string): RawLine[] {
  const parts = text.split('\n');
  const out: RawLine[] = [];
  let offset = 0;
  parts.forEach((p, i) => {
    const last = i === parts.length - 1;
    if (last ? p !== '' : p.trim() !== '') out.push({ kind: last ? 'torn' : 'line', line: i + 1, offset, text: p });
    offset += Buffer.byteLength(p) + 1;
  });
  return out;
}

async function collect<T>(g: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of g) out.push(x);
  return out;
}

describe('util: JSON Lines reader and writer', function () {
  let dir: string;
  beforeEach(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-jsonl-')); });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('numbers lines from 1, gives byte offsets (multi-byte text), skips blank lines but counts them, reports the torn tail', () => {
    const text = '{"a":"é€"}\n\n   \n{"b":2}\n{"c":';
    const lines = splitLines(text);
    assert.deepEqual(lines, expected(text));
    assert.deepEqual(lines.map((l) => [l.kind, l.line, l.offset]), [['line', 1, 0], ['line', 4, 19], ['torn', 5, 27]]);
    assert.equal(Buffer.from(text).subarray(lines[2].offset).toString(), '{"c":', 'the offset is a byte offset');
    assert.deepEqual(splitLines('x\n'), [{ kind: 'line', line: 1, offset: 0, text: 'x' }], 'a file ending with a newline has no torn line');
    assert.deepEqual(splitLines(''), []);
  });

  it('reads a file in chunks exactly as the whole text splits: lines longer than a chunk, a character cut by a chunk boundary', async () => {
    const rows: string[] = [];
    for (let i = 0; i < 400; i++) rows.push(i % 97 === 0 ? '' : JSON.stringify({ i, s: 'ü'.repeat((i * 7919) % 3000), long: i === 200 ? 'x'.repeat(200_000) : undefined }));
    const text = rows.join('\n') + '\n' + '{"torn":"ü';
    const file = path.join(dir, 'big.jsonl');
    await fsp.writeFile(file, text);
    const got = await collect(readLines(file));
    assert.deepEqual(got, expected(text));
    assert.ok(Buffer.byteLength(text) > 4 * 64 * 1024, 'the file spans several reads');
  });

  it('streams: a line is yielded as soon as its newline arrives, before the source ends', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    async function* source() { yield Buffer.from('{"a":1}\n{"b"'); await gate; yield ':2}\n'; }
    const it = streamLines(source(), { offset: 100, line: 10 })[Symbol.asyncIterator]();
    const first = await it.next();
    assert.deepEqual(first.value, { kind: 'line', line: 11, offset: 100, text: '{"a":1}' });
    release();
    assert.deepEqual((await it.next()).value, { kind: 'line', line: 12, offset: 108, text: '{"b":2}' });
    assert.equal((await it.next()).done, true);
  });

  it('resumes at a byte offset: a tailer reads the torn line again once its writer finished it', async () => {
    const file = path.join(dir, 'tail.jsonl');
    await fsp.writeFile(file, '{"n":1}\n{"n":');
    const first = await collect(readJsonLines(file));
    assert.deepEqual(first.map((l) => l.kind), ['value', 'torn']);
    const torn = first[1];
    await fsp.appendFile(file, '2}\n{"n":3}\n');
    const rest = await collect(readJsonLines<{ n: number }>(file, { fromOffset: torn.offset }));
    assert.deepEqual(rest.map((l) => (l.kind === 'value' ? [l.line, l.offset, l.value.n] : l.kind)), [[1, torn.offset, 2], [2, torn.offset + 8, 3]]);
  });

  it('parses values, reports a line that is not JSON with the parser message, and parses a torn last line only when asked', async () => {
    const file = path.join(dir, 'mixed.jsonl');
    await fsp.writeFile(file, '{"ok":true}\nnot json\n[1,2]');
    const lines = await collect(readJsonLines(file));
    assert.equal(lines[0].kind, 'value');
    assert.equal(lines[1].kind, 'invalid');
    assert.match(lines[1].kind === 'invalid' ? lines[1].error : '', /JSON|token/i);
    assert.deepEqual(lines[2], { kind: 'torn', line: 3, offset: 21, text: '[1,2]' });
    const byHand = await collect(readJsonLines(file, { parseTorn: true }));
    assert.deepEqual(byHand[2].kind === 'value' && byHand[2].value, [1, 2]);
    await fsp.writeFile(file, '{"ok":true}\n  ');
    assert.deepEqual((await collect(readJsonLines(file, { parseTorn: true }))).map((l) => l.kind), ['value'], 'a blank unterminated tail is no line');
    assert.equal(parseJsonLine({ kind: 'torn', line: 1, offset: 0, text: '{}' }).kind, 'torn');
  });

  it('a missing file reads as nothing, or throws BAD_INPUT naming it when asked; a FIFO is refused without blocking', async () => {
    const missing = path.join(dir, 'nope.jsonl');
    assert.deepEqual(await collect(readLines(missing)), []);
    await assert.rejects(collect(readLines(missing, { missing: 'throw' })), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && e.input === missing);
    const fifo = path.join(dir, 'fifo');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    await assert.rejects(collect(readLines(fifo)), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /FIFO/.test((e as Error).message));
  });

  it('the writer appends values as lines, in call order, also when appends are not awaited one by one', async () => {
    const file = path.join(dir, 'sub', 'out.jsonl');
    const w = new JsonLinesWriter(file);
    await Promise.all(Array.from({ length: 40 }, (_, i) => w.append(i % 2 ? [{ i }] : [{ i, pair: 1 }, { i, pair: 2 }])));
    const lines = (await fsp.readFile(file, 'utf8')).split('\n');
    assert.equal(lines.pop(), '', 'the file ends with a newline');
    assert.equal(lines.length, 60);
    assert.deepEqual(lines.map((l) => (JSON.parse(l) as { i: number }).i), Array.from({ length: 40 }, (_, i) => (i % 2 ? [i] : [i, i])).flat());
  });

  it('the writer never glues a line onto a torn last line: it starts on a new one', async () => {
    const file = path.join(dir, 'torn.jsonl');
    await fsp.writeFile(file, '{"good":1}\n{"torn":');
    const w = new JsonLinesWriter(file, { fsync: false });
    await w.append([{ next: 2 }]);
    await w.append([{ next: 3 }]);
    assert.equal(await fsp.readFile(file, 'utf8'), '{"good":1}\n{"torn":\n{"next":2}\n{"next":3}\n');
    const kinds = (await collect(readJsonLines(file))).map((l) => l.kind);
    assert.deepEqual(kinds, ['value', 'invalid', 'value', 'value']);
  });

  it('a value without a JSON form is refused naming the file, and nothing is written', async () => {
    const file = path.join(dir, 'refused.jsonl');
    const w = new JsonLinesWriter(file);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await assert.rejects(w.append([{ ok: 1 }, undefined]), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && e.input === file && /value 1 has no JSON form/.test(e.message));
    await assert.rejects(w.append([cyclic]), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /circular/i.test(e.message));
    await w.append([{ ok: 2 }]);
    assert.equal(await fsp.readFile(file, 'utf8'), '{"ok":2}\n');
  });

  it('a short write is an error, never a success; the failed append is cut back off and the next append follows the last good line', async function () {
    // A real short write: under RLIMIT_FSIZE (ulimit -f, 1 KiB units in bash) the kernel writes up
    // to the limit and returns the count, and the next write fails with EFBIG.
    const file = path.join(dir, 'short.jsonl');
    const jsonl = require.resolve('../../src/core/util/jsonl');
    const script = `
      const { JsonLinesWriter } = require(${JSON.stringify(jsonl)});
      const w = new JsonLinesWriter(${JSON.stringify(file)});
      w.append([{ small: 1 }]).then(() => w.append([{ big: 'y'.repeat(5000) }]))
        .then(() => console.log('resolved'), (e) => console.log('rejected', e.code, e.cause && e.cause.code, e.message));`;
    const r = spawnSync('bash', ['-c', `ulimit -f 2 && exec "${process.execPath}" -e "$0"`, script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^rejected BAD_INPUT EFBIG /, r.stdout);
    assert.match(r.stdout, new RegExp(file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'the error names the file');
    // The kernel took part of the big line (up to the 2048-byte limit) before refusing the rest; the
    // failed append is cut back off (issue 33: "the file's previous content is unchanged" must hold).
    const size = (await fsp.stat(file)).size;
    assert.equal(size, Buffer.byteLength('{"small":1}\n'), 'the failed append left bytes of its line');
    await new JsonLinesWriter(file).append([{ after: 3 }]);
    const lines = await collect(readJsonLines<Record<string, unknown>>(file));
    assert.deepEqual(lines.map((l) => l.kind), ['value', 'value']);
    assert.deepEqual(lines[1].kind === 'value' && lines[1].value, { after: 3 });
  });
});
