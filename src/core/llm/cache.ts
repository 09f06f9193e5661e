import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { log } from '../log';
import { errorMessage } from '../util/errors';
import { readJsonIfExists } from '../util/fs';
import { readJsonLines } from '../util/jsonl';

const logger = log('llm');

/**
 * Content-addressed cache of validated model answers under `dir` (the judge's: `<session>/private/judge/cache`).
 *
 * The key is the sha256 of everything that decides an answer: the caller's scope (the judge's
 * prompt version), the model, the decoding parameters (temperature, seed), the response schema
 * name and the full messages (which, for the judge, contain the task content, the patch hunks and
 * the answers). The same inputs therefore never call
 * the model twice, and any changed input misses. Only valid answers are stored: a failed call (for the judge, a harness
 * error) is never cached, so it is retried on the next run.
 *
 * Storage: one append-only journal `<dir>/entries.jsonl`, a line `{"key", "entry"}` per answer
 * (the last line of a key wins). {@link put} appends the line as soon as the answer arrives (one
 * `write`, no fsync: a crash of the process afterwards loses nothing); {@link flush} makes every
 * line appended by this instance durable with ONE fsync (call it once per run, also when
 * the run failed: it also closes the journal). A line torn by a power loss before the flush is skipped as a miss.
 * Entries of the former layout, one file per key (`<dir>/<key[0..2]>/<key>.json`), are still read.
 */
export class AnswerCache {
  private index?: Promise<Map<string, CacheEntry<unknown>>>;
  /** The journal, open for appending from the first {@link put} until {@link flush}. */
  private fd?: number;
  private flushed = false;
  /** The journal ends inside a torn line: the next append starts on a new line. */
  private torn = false;

  constructor(readonly dir: string) {}

  /** sha256 (hex) of the canonical JSON of `parts`. */
  static key(parts: unknown): string {
    return createHash('sha256').update(canonicalJson(parts)).digest('hex');
  }

  /** The stored entry of `key`, or undefined (never stored, or damaged: a damaged entry is a miss). */
  async get<T>(key: string): Promise<CacheEntry<T> | undefined> {
    const hit = (await this.load()).get(key);
    if (hit) return hit as CacheEntry<T>;
    try {
      return await readJsonIfExists<CacheEntry<T>>(this.legacyFile(key));
    } catch {
      return undefined;
    }
  }

  /**
   * Appends the entry to the journal at once (durable after {@link flush}); later gets of this
   * instance see it. The line is written with one synchronous `write` to a descriptor kept open
   * until {@link flush}: a few KB into the OS's page cache, cheaper than a thread-pool round trip,
   * and lines never interleave.
   */
  async put<T>(key: string, entry: CacheEntry<T>): Promise<void> {
    (await this.load()).set(key, entry);
    const line = (this.torn ? '\n' : '') + JSON.stringify({ key, entry }) + '\n';
    fs.mkdirSync(this.dir, { recursive: true });
    if (this.flushed) {
      fs.appendFileSync(this.journal(), line); // a call still in flight when the run ended: keep no descriptor open
    } else {
      this.fd ??= fs.openSync(this.journal(), 'a');
      fs.writeSync(this.fd, line);
    }
    this.torn = false;
  }

  /**
   * Makes every entry appended by this instance durable with ONE fsync and closes the journal.
   * Never throws: a failed fsync is logged (the entries stay in the OS's cache and are still read).
   */
  async flush(): Promise<void> {
    this.flushed = true;
    const fd = this.fd;
    if (fd === undefined) return;
    this.fd = undefined;
    try {
      await promisify(fs.fsync)(fd);
    } catch (e) {
      logger.warn(`${this.journal()}: fsync failed: ${errorMessage(e)}`);
    } finally {
      await promisify(fs.close)(fd).catch(() => undefined);
    }
  }

  /** Number of entries (for tests and `expbench judge --json`). */
  async size(): Promise<number> {
    const keys = new Set((await this.load()).keys());
    for (const d of await fsp.readdir(this.dir).catch(() => [] as string[])) {
      for (const f of await fsp.readdir(path.join(this.dir, d)).catch(() => [] as string[])) {
        if (f.endsWith('.json')) keys.add(f.slice(0, -'.json'.length));
      }
    }
    return keys.size;
  }

  /** Reads the journal once per instance (a missing file is an empty cache; bad lines are skipped). */
  private load(): Promise<Map<string, CacheEntry<unknown>>> {
    this.index ??= (async () => {
      const m = new Map<string, CacheEntry<unknown>>();
      try {
        for await (const l of readJsonLines<{ key?: unknown; entry?: unknown }>(this.journal())) {
          if (l.kind === 'torn') this.torn = true; // a miss; the next append starts on a new line
          const r = l.kind === 'value' ? l.value : undefined;
          if (r && typeof r.key === 'string' && r.entry && typeof r.entry === 'object') m.set(r.key, r.entry as CacheEntry<unknown>);
        }
      } catch (e) {
        logger.warn(`${this.journal()}: unreadable, used as an empty cache: ${errorMessage(e)}`);
        m.clear();
      }
      return m;
    })();
    return this.index;
  }

  private journal(): string {
    return path.join(this.dir, 'entries.jsonl');
  }

  private legacyFile(key: string): string {
    return path.join(this.dir, key.slice(0, 2), `${key}.json`);
  }
}

export interface CacheEntry<T> {
  value: T;
  model: string;
  promptTokens: number;
  completionTokens: number;
  storedAt: string;
}

/** JSON with object keys sorted, so that equal content always gives the same text. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, val) => {
    if (val && typeof val === 'object' && !Array.isArray(val)) {
      return Object.fromEntries(Object.keys(val).sort().map((k) => [k, (val as Record<string, unknown>)[k]]));
    }
    return val;
  });
}
