import { promises as fsp } from 'node:fs';
import { ExpBenchError } from '../errors';
import type { StepSource } from '../steps/step';
import { openZip } from '../trajectory/zip';
import { errorMessage } from '../util/errors';

/** Characters of raw source the viewer shows at most (the rest is said to be cut). */
export const RAW_SOURCE_CHARS = 200_000;

/** Bytes read from a line's offset to find its end (a longer line is read whole from the file). */
const LINE_PROBE = 1024 * 1024;

/**
 * The raw JSON of the event a step came from, pretty-printed: `source.entry` of a zip (Inspect
 * `.eval`), else `source.line` of a JSON Lines file (from `source.offset` when given), else the whole
 * document; then `source.pointer` (RFC 6901) into it. `readDoc` caches whole documents (a viewer
 * asks often).
 * @returns the text (at most {@link RAW_SOURCE_CHARS} characters) and whether it was cut
 * @throws ExpBenchError BAD_INPUT naming the file when the entry, line or pointer is not there or is not JSON
 */
export async function rawSource(src: StepSource, readDoc: (file: string) => Promise<unknown> = readWholeJson): Promise<{ text: string; cut: boolean; where: string }> {
  const where = `${src.file}${src.entry ? `!${src.entry}` : ''}${src.line ? `:${src.line}` : ''}${src.pointer ? `#${src.pointer}` : ''}`;
  let doc: unknown;
  try {
    if (src.entry) {
      const z = await openZip(src.file);
      try { doc = JSON.parse((await z.read(src.entry)).toString('utf8')); } finally { z.close(); }
    } else if (src.line) {
      doc = JSON.parse(await readLine(src.file, src.line, src.offset));
    } else {
      doc = await readDoc(src.file);
    }
  } catch (e) {
    throw new ExpBenchError('BAD_INPUT', where, `cannot read the step's source: ${errorMessage(e)}`);
  }
  const value = src.pointer ? resolvePointer(doc, src.pointer, where) : doc;
  const text = JSON.stringify(value, null, 2) ?? String(value);
  return text.length > RAW_SOURCE_CHARS ? { text: text.slice(0, RAW_SOURCE_CHARS), cut: true, where } : { text, cut: false, where };
}

/** The value at RFC 6901 `pointer` in `doc`. @throws ExpBenchError BAD_INPUT naming `where` when a part is missing */
export function resolvePointer(doc: unknown, pointer: string, where: string): unknown {
  if (pointer === '') return doc;
  let v: unknown = doc;
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(v) && /^\d+$/.test(part) && Number(part) < v.length) v = v[Number(part)];
    else if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, part)) v = (v as Record<string, unknown>)[part];
    else throw new ExpBenchError('BAD_INPUT', where, `the source has nothing at ${JSON.stringify(pointer)} (part ${JSON.stringify(part)})`);
  }
  return v;
}

async function readWholeJson(file: string): Promise<unknown> {
  return JSON.parse((await fsp.readFile(file, 'utf8')).replace(/^\uFEFF/, ''));
}

/** Line `line` (1-based) of `file`, read from `offset` when known, else by counting lines. */
async function readLine(file: string, line: number, offset?: number): Promise<string> {
  if (offset !== undefined) {
    const fh = await fsp.open(file, 'r');
    try {
      const buf = Buffer.alloc(LINE_PROBE);
      const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
      const nl = buf.subarray(0, bytesRead).indexOf(0x0a);
      if (nl >= 0 || bytesRead < buf.length) return buf.subarray(0, nl >= 0 ? nl : bytesRead).toString('utf8');
    } finally { await fh.close(); }
  }
  const text = await fsp.readFile(file, 'utf8');
  let start = 0;
  for (let i = 1; i < line; i++) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) throw new Error(`the file has fewer than ${line} lines`);
    start = nl + 1;
  }
  const end = text.indexOf('\n', start);
  return text.slice(start, end < 0 ? undefined : end);
}
