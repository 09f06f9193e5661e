import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { readJsonIfExists, writeJsonAtomic } from '../util/fs';

/**
 * Content-addressed cache of validated judge answers, one JSON file per key under `dir`
 * (`<dir>/<key[0..2]>/<key>.json`).
 *
 * The key is the sha256 of everything that decides an answer: the prompt version, the model, the
 * decoding parameters (temperature, seed), the response schema name and the full messages (which
 * contain the task content, the patch hunks and the answers). The same inputs therefore never call
 * the model twice, and any changed input misses. Only valid answers are stored: a harness error is
 * never cached, so it is retried on the next run.
 */
export class JudgeCache {
  constructor(readonly dir: string) {}

  /** sha256 (hex) of the canonical JSON of `parts`. */
  static key(parts: unknown): string {
    return createHash('sha256').update(canonicalJson(parts)).digest('hex');
  }

  async get<T>(key: string): Promise<CacheEntry<T> | undefined> {
    try {
      return await readJsonIfExists<CacheEntry<T>>(this.file(key));
    } catch {
      return undefined; // a damaged entry is a miss; it is overwritten on the next store
    }
  }

  async put<T>(key: string, entry: CacheEntry<T>): Promise<void> {
    await writeJsonAtomic(this.file(key), entry);
  }

  /** Number of entries (for tests and `expbench judge --json`). */
  async size(): Promise<number> {
    let n = 0;
    for (const d of await fsp.readdir(this.dir).catch(() => [] as string[])) {
      n += (await fsp.readdir(path.join(this.dir, d)).catch(() => [] as string[])).filter((f) => f.endsWith('.json')).length;
    }
    return n;
  }

  private file(key: string): string {
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
