/**
 * Bounds on what a task file may hold. Task files are untrusted input (any folder can be a dataset):
 * every number read from one is checked against a limit, and nesting is measured without recursion
 * before any recursive code (text rendering, schemas, `JSON.stringify`) sees the value. The real
 * EXP-Bench files nest at most 8 levels, reference lines below 10,000, and weigh under 1 MiB each.
 */

/** Deepest nesting of arrays/objects accepted in a task file or a paper-list line (the top level is depth 0). */
export const MAX_JSON_DEPTH = 64;
/** Largest line number a requirement reference may name. */
export const MAX_REF_LINE = 10_000_000;
/** Largest notebook cell number a requirement reference may name. */
export const MAX_REF_CELL = 100_000;
/** Largest task file or paper list read, bytes (larger ones are one problem, not read). */
export const MAX_TASK_FILE_BYTES = 64 * 1024 * 1024;

/**
 * The path (keys and indexes) to the first value nested deeper than `limit` levels in `value`,
 * found by an iterative walk (no recursion, whatever the depth); `undefined` when none is.
 * The path has `limit + 1` segments: it stops at the first level past the limit.
 */
export function tooDeepAt(value: unknown, limit = MAX_JSON_DEPTH): string[] | undefined {
  return deeperThan(value, limit) ? pathTooDeep(value, limit) : undefined;
}

/**
 * True when `value` holds an array or object more than `limit` levels down: an iterative walk that
 * allocates no path (two parallel stacks), for the common case of a value within the limit. Every
 * task entry goes through it, so it is kept cheap (bench/tasks.bench.ts).
 */
function deeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const values: object[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop() as Record<string, unknown>;
    const d = (depths.pop() as number) + 1;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (x === null || typeof x !== 'object') continue;
        if (d > limit) return true;
        values.push(x);
        depths.push(d);
      }
    } else {
      for (const k in v) {
        const x = v[k];
        if (x === null || typeof x !== 'object') continue;
        if (d > limit) return true;
        values.push(x);
        depths.push(d);
      }
    }
  }
  return false;
}

/** The path of {@link tooDeepAt} (only called when {@link deeperThan} said there is one). */
function pathTooDeep(value: unknown, limit: number): string[] | undefined {
  const stack: Array<{ v: unknown; path: string[] }> = [{ v: value, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop() as { v: unknown; path: string[] };
    if (v === null || typeof v !== 'object') continue;
    const entries: Array<[string, unknown]> = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, x] = entries[i];
      if (x === null || typeof x !== 'object') continue;
      const at = [...path, k];
      if (at.length > limit) return at;
      stack.push({ v: x, path: at });
    }
  }
  return undefined;
}

/**
 * A whole line number written in a reference, when it is a positive safe integer ≤ `max`;
 * otherwise why not (a sentence naming the value and the limit).
 */
export function boundedLine(digits: string, max: number, what: string): { value: number } | { problem: string } {
  const n = Number(digits);
  if (!Number.isSafeInteger(n) || n > max) return { problem: `${what} ${digits.length > 24 ? `${digits.slice(0, 24)}… (${digits.length} digits)` : digits} is beyond the limit of ${max}` };
  if (n < 1) return { problem: `${what} ${digits} is not ≥ 1 (lines and cells count from 1)` };
  return { value: n };
}
