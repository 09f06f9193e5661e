import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';
import { MAX_ENTRY_BYTES, openZip } from '../../src/core/trajectory/zip';

/**
 * A zip archive written by hand (PKWARE APPNOTE 4.3: local header, data, central directory, end
 * record), so that an entry can hold exactly the bytes a test needs: deflated data of any
 * declared size, or a size field that lies. `centralDirectory: false` leaves the directory out (a
 * cut download: the reader walks the local headers).
 */
function zipOf(entries: Array<{ name: string; method: number; data: Buffer; size: number; crc: number }>, centralDirectory = true): Buffer {
  const locals: Buffer[] = []; const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0); lh.writeUInt16LE(20, 4); lh.writeUInt16LE(0, 6); lh.writeUInt16LE(e.method, 8);
    lh.writeUInt32LE(e.crc >>> 0, 14); lh.writeUInt32LE(e.data.length, 18); lh.writeUInt32LE(e.size, 22); lh.writeUInt16LE(name.length, 26);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0); ch.writeUInt16LE(20, 4); ch.writeUInt16LE(20, 6); ch.writeUInt16LE(e.method, 10);
    ch.writeUInt32LE(e.crc >>> 0, 16); ch.writeUInt32LE(e.data.length, 20); ch.writeUInt32LE(e.size, 24); ch.writeUInt16LE(name.length, 28); ch.writeUInt32LE(offset, 42);
    locals.push(lh, name, e.data); centrals.push(ch, name);
    offset += 30 + name.length + e.data.length;
  }
  if (!centralDirectory) return Buffer.concat(locals);
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(entries.length, 8); end.writeUInt16LE(entries.length, 10); end.writeUInt32LE(cd.length, 12); end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** `mib` MiB of zeros deflated (method 8) without holding them: the data, its size and CRC-32. */
async function deflatedZeros(mib: number): Promise<{ data: Buffer; size: number; crc: number }> {
  const d = zlib.createDeflateRaw({ level: 1 });
  const parts: Buffer[] = [];
  d.on('data', (c: Buffer) => parts.push(c));
  const done = new Promise<void>((resolve, reject) => { d.on('end', resolve); d.on('error', reject); });
  const chunk = Buffer.alloc(1 << 20);
  let crc = 0;
  for (let i = 0; i < mib; i++) {
    crc = zlib.crc32(chunk, crc);
    if (!d.write(chunk)) await new Promise((r) => d.once('drain', r));
  }
  d.end();
  await done;
  return { data: Buffer.concat(parts), size: mib * (1 << 20), crc };
}

/**
 * A Zstandard frame (RFC 8878) of one raw block holding `data` (< 256 bytes): magic, a frame header
 * with the single-segment flag and a one-byte content size, then the block header (last, raw, size).
 */
function zstdRawFrame(data: Buffer): Buffer {
  assert.ok(data.length < 256);
  const blockHeader = 1 | (data.length << 3);
  return Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x20, data.length, blockHeader & 0xff, (blockHeader >> 8) & 0xff, (blockHeader >> 16) & 0xff]), data]);
}

const header = (): { name: string; method: number; data: Buffer; size: number; crc: number } => {
  const data = Buffer.from(JSON.stringify({ version: 2, status: 'success', eval: { task: 'bomb' } }));
  return { name: 'header.json', method: 0, data, size: data.length, crc: zlib.crc32(data) };
};

async function importOne(file: string): Promise<{ ts: Trajectory[]; problems: string[] }> {
  const ts: Trajectory[] = [];
  const r = await importFiles([file], (t) => { ts.push(t); });
  return { ts, problems: r.problems.map((p) => `${p.entry ?? ''} ${p.message}`) };
}

describe('Inspect .eval zip entries: declared and actual sizes checked while streaming (issue 33, fault round)', function () {
  this.timeout(120_000);
  let dir: string;
  let bomb: { data: Buffer; size: number; crc: number };

  before(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-zip-'));
    bomb = await deflatedZeros(1024); // 1 GiB of zeros, about 4.7 MB deflated
  });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('an entry declared at 1 GiB is refused before it is inflated: a problem names it, memory stays bounded', async () => {
    const file = path.join(dir, 'bomb.eval');
    await fsp.writeFile(file, zipOf([header(), { name: 'samples/1_epoch_1.json', method: 8, ...bomb }]));
    assert.ok((await fsp.stat(file)).size < 8 * 1024 * 1024);
    const rss0 = process.memoryUsage().rss;
    const { ts, problems } = await importOne(file);
    const grown = process.memoryUsage().rss - rss0;
    assert.equal(ts.length, 0);
    assert.ok(problems.some((p) => /samples\/1_epoch_1\.json/.test(p) && /declares 1,073,741,824 bytes uncompressed, more than the [\d,]+ an entry may hold/.test(p)), problems.join('\n'));
    assert.ok(grown < 256 * 1024 * 1024, `RSS grew by ${Math.round(grown / 1048576)} MiB while reading a 1 GiB entry`);
  });

  it('the same entry in an archive without its central directory (the local-header walk) is refused too', async () => {
    const file = path.join(dir, 'bomb-cut.eval');
    await fsp.writeFile(file, zipOf([header(), { name: 'samples/1_epoch_1.json', method: 8, ...bomb }], false));
    const { problems } = await importOne(file);
    assert.ok(problems.some((p) => /damaged zip archive/.test(p)), problems.join('\n'));
    assert.ok(problems.some((p) => /declares 1,073,741,824 bytes uncompressed/.test(p)), problems.join('\n'));
  });

  it('an entry whose data inflates past the size it declares is cut off while streaming, with both paths', async () => {
    const big = await deflatedZeros(64);
    for (const cd of [true, false]) {
      const file = path.join(dir, `liar-${cd}.eval`);
      await fsp.writeFile(file, zipOf([header(), { name: 'samples/1_epoch_1.json', method: 8, data: big.data, size: 1024, crc: big.crc }], cd));
      const { ts, problems } = await importOne(file);
      assert.equal(ts.length, 0);
      assert.ok(problems.some((p) => /samples\/1_epoch_1\.json/.test(p) && /inflates past the 1,024 bytes it declares/.test(p)), `${cd}: ${problems.join('\n')}`);
    }
  });

  it('a zstd entry (method 93) that inflates past its declared size is cut off; a true one is read', async () => {
    const json = Buffer.from(JSON.stringify({ id: 1, epoch: 1, events: [] }));
    const frame = zstdRawFrame(json);
    const ok = path.join(dir, 'zstd-ok.eval');
    await fsp.writeFile(ok, zipOf([header(), { name: 'samples/1_epoch_1.json', method: 93, data: frame, size: json.length, crc: zlib.crc32(json) }]));
    assert.equal((await importOne(ok)).ts.length, 1);
    const liar = path.join(dir, 'zstd-liar.eval');
    await fsp.writeFile(liar, zipOf([header(), { name: 'samples/1_epoch_1.json', method: 93, data: frame, size: 8, crc: zlib.crc32(json) }]));
    const { ts, problems } = await importOne(liar);
    assert.equal(ts.length, 0);
    assert.ok(problems.some((p) => /inflates past the 8 bytes it declares/.test(p)), problems.join('\n'));
  });

  it('openZip takes a smaller limit; the default is V8\'s longest string', async () => {
    assert.ok(MAX_ENTRY_BYTES >= 256 * 1024 * 1024 && MAX_ENTRY_BYTES < 1024 * 1024 * 1024);
    const file = path.join(dir, 'small-limit.eval');
    const body = Buffer.from(JSON.stringify({ id: 1, events: [] }).padEnd(4096, ' '));
    await fsp.writeFile(file, zipOf([{ name: 'samples/1_epoch_1.json', method: 0, data: body, size: body.length, crc: zlib.crc32(body) }]));
    const z = await openZip(file, { maxEntryBytes: 1000 });
    await assert.rejects(z.read('samples/1_epoch_1.json'), /declares 4,096 bytes uncompressed, more than the 1,000/);
    z.close();
    const z2 = await openZip(file);
    assert.equal((await z2.read('samples/1_epoch_1.json')).length, 4096);
    z2.close();
  });
});
