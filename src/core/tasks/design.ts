import { MAX_JSON_DEPTH } from './limits';
import type { DesignGroundTruth, DesignVariable, Problem } from './types';

type Report = (pointer: string, severity: Problem['severity'], message: string) => void;

const GROUPS: Array<[keyof DesignGroundTruth, string[]]> = [
  ['constants', ['constant_variables', 'constant_variable']],
  ['independent', ['independent_variables', 'independent_variable']],
  ['dependent', ['dependent_variables', 'dependent_variable']],
];

/**
 * Normalises the ground-truth design of a task entry to constants / independent / dependent variables.
 *
 * Variants seen in the real files: `design_complexity: {constant_variables, independent_variables,
 * dependent_variables}` (normal); the same nested one level deeper under `design_complexity`;
 * `experiment_design_complexity` instead of (or beside) `design_complexity`; singular keys
 * (`dependent_variable`); a `design_complexity` that holds only `design_ambiguity`. The first
 * candidate that has variables wins. Absent → empty groups and a warning.
 *
 * @param entry one entry of `questions`; `pointer` is its JSON pointer (`/questions/3`).
 */
export function normaliseDesign(entry: Record<string, unknown>, pointer: string, report: Report): DesignGroundTruth {
  const out: DesignGroundTruth = { constants: [], independent: [], dependent: [] };
  for (const key of ['design_complexity', 'experiment_design_complexity']) {
    const found = findGroups(entry[key], `${pointer}/${key}`);
    if (!found) continue;
    for (const [group, names] of GROUPS) {
      const name = names.find((n) => n in found.obj);
      if (name === undefined) continue;
      const value = found.obj[name];
      const at = `${found.pointer}/${name}`;
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        report(at, 'warning', `expected an object of variables, found ${kind(value)}`);
        continue;
      }
      out[group] = Object.entries(value as Record<string, unknown>).map(([n, v]) => variable(n, v));
    }
    if (found.nested) report(found.pointer, 'info', `design variables nested one level deeper under "${found.nestedKey}"`);
    return out;
  }
  const has = ['design_complexity', 'experiment_design_complexity'].filter((k) => k in entry);
  report(has.length ? `${pointer}/${has[0]}` : pointer, 'warning',
    has.length ? 'no constant, independent or dependent variables found: design ground truth is empty' : 'no design_complexity: design ground truth is empty');
  return out;
}

function findGroups(value: unknown, pointer: string): { obj: Record<string, unknown>; pointer: string; nested: boolean; nestedKey?: string } | undefined {
  if (!isObject(value)) return undefined;
  if (hasGroup(value)) return { obj: value, pointer, nested: false };
  for (const [k, v] of Object.entries(value)) {
    if (isObject(v) && hasGroup(v)) return { obj: v, pointer: `${pointer}/${escapePointer(k)}`, nested: true, nestedKey: k };
  }
  return undefined;
}

function hasGroup(o: Record<string, unknown>): boolean {
  return GROUPS.some(([, names]) => names.some((n) => n in o));
}

function variable(name: string, v: unknown): DesignVariable {
  if (Array.isArray(v)) return { name, description: v.map((x) => text(x)).join('; '), values: v.map((x) => text(x)) };
  return { name, description: text(v) };
}

/**
 * Flattens any JSON value to readable text (`k: v; k2: v2` for objects). Values nested deeper than
 * {@link MAX_JSON_DEPTH} are shown as `…` (the loader refuses such files before this runs).
 */
export function text(v: unknown, depth = 0): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (depth >= MAX_JSON_DEPTH) return '…';
  if (Array.isArray(v)) return v.map((x) => text(x, depth + 1)).join('; ');
  return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}: ${text(x, depth + 1)}`).join('; ');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function kind(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

/** Escapes a key for a JSON pointer (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
