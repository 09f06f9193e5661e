import { createHash } from 'node:crypto';
import { canonicalJson } from '../review/canonical';

/** Version of the unit key's recipe (docs/runs.md "Units and their keys"); a new recipe is a new version. */
export const KEY_VERSION = 1;

/** SHA-256 (hex) of `value` in canonical JSON (sorted keys: the same value, the same hash). */
export function hashOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** The parts of a unit's key, each a hash or a plain string, as recorded in `unit.planned.keyParts`. */
export interface KeyParts {
  /** SHA-256 of the task's entry in its task file (canonical JSON). */
  task: string;
  /** SHA-256 of the actor's content (agent: model and limits and its price; import: its files' hashes). */
  actor: string;
  /** The image, as resolved. */
  image: string;
  /** SHA-256 of `{source, commit}` (commit null: the source's HEAD at preparation). */
  pin: string;
}

/** A unit's key: SHA-256 of `{v, parts, attempt}`. */
export function unitKey(parts: KeyParts, attempt: number): string {
  return hashOf({ v: KEY_VERSION, ...parts, attempt });
}

/** Which parts differ between two units of one slot, in words (`the task`, `the actor`, …). */
export function changedParts(a: KeyParts, b: KeyParts): string[] {
  const words: Record<keyof KeyParts, string> = { task: 'the task changed', actor: 'the actor changed', image: `the image changed (${a.image} → ${b.image})`, pin: 'the source or commit changed' };
  return (Object.keys(words) as Array<keyof KeyParts>).filter((k) => a[k] !== b[k]).map((k) => words[k]);
}
