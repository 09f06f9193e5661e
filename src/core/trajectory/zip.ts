import { constants as bufferConstants } from 'node:buffer';
import { promises as fsp } from 'node:fs';
import * as zlib from 'node:zlib';
import { Decompress as ZstdDecompress } from 'fzstd';
import * as yauzl from 'yauzl';
import * as yazl from 'yazl';
import { errorMessage } from '../util/errors';
import { writeAtomicStream } from '../util/fs';

/**
 * Reading zip archives entry by entry (Inspect `.eval` logs): deflate (method 8) through yauzl,
 * zstd (method 93) through fzstd, stored (0) as is. A damaged archive (no central directory,
 * e.g. a truncated download) is read by walking the local file headers from the start instead,
 * so the entries before the damage are still read.
 */
export const ZSTD_METHOD = 93;

/**
 * The most bytes one entry may hold once decompressed: V8's longest string (about 512 MiB on
 * 64-bit Node), since every entry the importers read is JSON text made into one string. An entry
 * that declares more is refused before any byte of it is read; an entry whose data inflates past
 * what it declares (or past this) is cut off as soon as it does, while streaming (zip bombs, lying
 * headers), so memory never holds more than the declared size.
 */
export const MAX_ENTRY_BYTES = bufferConstants.MAX_STRING_LENGTH;

export interface ZipEntryInfo {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
}

export interface ZipReader {
  entries: ZipEntryInfo[];
  /** True when the central directory was unreadable and the entries come from a forward scan. */
  recovered: boolean;
  /** Why the archive needed recovery (the central directory's error). */
  recoveryReason?: string;
  /** The entry's bytes, decompressed. Throws an Error naming the entry when it cannot be read. */
  read(name: string): Promise<Buffer>;
  close(): void;
}

/** The error for an entry that declares more than {@link MAX_ENTRY_BYTES}, or undefined. */
function declaredTooLarge(name: string, size: number, limit: number): Error | undefined {
  return size > limit ? new Error(`${name}: the entry declares ${size.toLocaleString('en')} bytes uncompressed, more than the ${limit.toLocaleString('en')} an entry may hold; not read`) : undefined;
}

function inflatedPast(name: string, size: number, declared: number): Error {
  return new Error(`${name}: the entry inflates past the ${declared.toLocaleString('en')} bytes it declares (at least ${size.toLocaleString('en')}); not read`);
}

/**
 * Decompresses `raw` stored with zip `method`, at most `declared` bytes (the entry's declared
 * uncompressed size, capped at {@link MAX_ENTRY_BYTES}).
 * @throws Error naming the entry when it declares too much, inflates past `declared`, or its method is unknown
 */
export function inflateEntry(raw: Buffer, method: number, name: string, declared = MAX_ENTRY_BYTES, limit = MAX_ENTRY_BYTES): Buffer {
  const big = declaredTooLarge(name, declared, limit);
  if (big) throw big;
  if (method === 0) { if (raw.length > declared) throw inflatedPast(name, raw.length, declared); return raw; }
  if (method === 8) {
    try { return zlib.inflateRawSync(raw, { maxOutputLength: Math.max(1, declared) }); } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw inflatedPast(name, declared + 1, declared);
      throw e;
    }
  }
  if (method === ZSTD_METHOD) {
    const parts: Uint8Array[] = [];
    let n = 0;
    const d = new ZstdDecompress((chunk) => {
      n += chunk.length;
      if (n > declared) throw inflatedPast(name, n, declared);
      parts.push(chunk);
    });
    d.push(raw, true);
    return Buffer.concat(parts, n);
  }
  throw new Error(`${name}: unsupported zip compression method ${method}`);
}

/**
 * Opens `file` as a zip archive; throws when it is not one at all.
 * @param opts.maxEntryBytes the most bytes one entry may inflate to (default {@link MAX_ENTRY_BYTES})
 */
export async function openZip(file: string, opts: { maxEntryBytes?: number } = {}): Promise<ZipReader> {
  const limit = Math.min(opts.maxEntryBytes ?? MAX_ENTRY_BYTES, MAX_ENTRY_BYTES);
  try {
    return await openWithCentralDirectory(file, limit);
  } catch (e) {
    return await scanLocalHeaders(file, errorMessage(e), limit);
  }
}

function openWithCentralDirectory(file: string, limit: number): Promise<ZipReader> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('cannot open'));
      const byName = new Map<string, yauzl.Entry>();
      const entries: ZipEntryInfo[] = [];
      zip.on('entry', (en: yauzl.Entry) => {
        if (!en.fileName.endsWith('/')) {
          byName.set(en.fileName, en);
          entries.push({ name: en.fileName, method: en.compressionMethod, compressedSize: en.compressedSize, size: en.uncompressedSize });
        }
        zip.readEntry();
      });
      zip.on('error', (e: Error) => reject(e));
      zip.on('end', () => resolve({
        entries, recovered: false,
        read: (name) => new Promise<Buffer>((res, rej) => {
          const en = byName.get(name);
          if (!en) return rej(new Error(`${name}: no such entry`));
          // the declared size first: nothing of an entry too large is read
          const big = declaredTooLarge(name, en.uncompressedSize, limit);
          if (big) return rej(big);
          const raw = en.compressionMethod !== 0 && en.compressionMethod !== 8;
          // yauzl's validateEntrySizes stops a stored or deflated entry as soon as it passes its declared size
          zip.openReadStream(en, raw ? { decodeFileData: false } : {}, (e2, stream) => {
            if (e2 || !stream) return rej(new Error(`${name}: ${errorMessage(e2)}`));
            const parts: Buffer[] = [];
            stream.on('data', (d: Buffer) => parts.push(d));
            stream.on('error', (e3: Error) => { stream.destroy(); rej(new Error(`${name}: ${/too many bytes/.test(e3.message) ? `the entry inflates past the ${en.uncompressedSize.toLocaleString('en')} bytes it declares; not read` : e3.message}`)); });
            stream.on('end', () => {
              try { res(raw ? inflateEntry(Buffer.concat(parts), en.compressionMethod, name, en.uncompressedSize, limit) : Buffer.concat(parts)); } catch (e4) { rej(e4 instanceof Error && e4.message.startsWith(name) ? e4 : new Error(`${name}: ${errorMessage(e4)}`)); }
            });
          });
        }),
        close: () => zip.close(),
      }));
      zip.readEntry();
    });
  });
}

/** Forward scan of local file headers (signature PK\x03\x04) of a damaged archive. */
async function scanLocalHeaders(file: string, reason: string, limit: number): Promise<ZipReader> {
  const buf = await fsp.readFile(file);
  if (buf.length < 4 || buf.readUInt32LE(0) !== 0x04034b50) throw new Error(`not a zip archive (${reason})`);
  const found = new Map<string, { method: number; start: number; csize: number; size: number; truncated: boolean }>();
  const entries: ZipEntryInfo[] = [];
  let pos = 0;
  while (pos + 30 <= buf.length && buf.readUInt32LE(pos) === 0x04034b50) {
    const flags = buf.readUInt16LE(pos + 6);
    const method = buf.readUInt16LE(pos + 8);
    let csize = buf.readUInt32LE(pos + 18);
    let size = buf.readUInt32LE(pos + 22);
    const nlen = buf.readUInt16LE(pos + 26);
    const xlen = buf.readUInt16LE(pos + 28);
    const name = buf.toString('utf8', pos + 30, Math.min(buf.length, pos + 30 + nlen));
    const extraStart = pos + 30 + nlen;
    if (csize === 0xffffffff || size === 0xffffffff) {
      // zip64: sizes in the extra field (header id 0x0001)
      for (let x = extraStart; x + 4 <= extraStart + xlen && x + 4 <= buf.length;) {
        const id = buf.readUInt16LE(x); const len = buf.readUInt16LE(x + 2);
        if (id === 1 && x + 20 <= buf.length) { size = Number(buf.readBigUInt64LE(x + 4)); csize = Number(buf.readBigUInt64LE(x + 12)); }
        x += 4 + len;
      }
    }
    const start = extraStart + xlen;
    if ((flags & 8) && csize === 0) break; // sizes only in a data descriptor: cannot skip safely
    const truncated = start + csize > buf.length;
    if (!name.endsWith('/')) {
      found.set(name, { method, start, csize, size, truncated });
      entries.push({ name, method, compressedSize: csize, size });
    }
    if (truncated) break;
    pos = start + csize + ((flags & 8) ? (buf.readUInt32LE(start + csize) === 0x08074b50 ? 16 : 12) : 0);
  }
  return {
    entries, recovered: true, recoveryReason: reason,
    read: async (name) => {
      const f = found.get(name);
      if (!f) throw new Error(`${name}: no such entry`);
      if (f.truncated) throw new Error(`${name}: entry truncated (${buf.length - f.start} of ${f.csize} compressed bytes present)`);
      // a local header's size is 0 when a data descriptor follows: then only the limit bounds it
      const declared = f.size > 0 ? f.size : limit;
      try { return inflateEntry(buf.subarray(f.start, f.start + f.csize), f.method, name, declared, limit); } catch (e) { throw e instanceof Error && e.message.startsWith(name) ? e : new Error(`${name}: ${errorMessage(e)}`); }
    },
    close: () => undefined,
  };
}

/** One file of an archive to write: its name (`/`-separated) and bytes. */
export interface ZipEntryData { name: string; data: Buffer }

/**
 * Writes `entries` as a zip archive to `file` through yazl (deflate, method 8; UTF-8 names; zip64
 * records added by yazl when an entry or the archive passes 4 GiB). The archive is written next to
 * `file` and renamed into place, so a reader never sees half an archive. The same archives
 * {@link openZip} reads.
 * @throws ExpBenchError BAD_INPUT naming `file` when it cannot be written (util/fs.ts `writeAtomicStream`: the disk full, not a regular file, …)
 */
export async function writeZip(file: string, entries: ZipEntryData[], mtime = new Date()): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const e of entries) zip.addBuffer(e.data, e.name, { mtime, mode: 0o100644 });
  zip.end();
  // The durable writer's temp file beside `file` (removed on any failure, swept when a writer was killed).
  await writeAtomicStream(file, zip.outputStream as AsyncIterable<Buffer>);
}
