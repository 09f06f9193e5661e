/**
 * JSON with every object's keys in sorted order (UTF-16 code unit order, as `Array.prototype.sort`),
 * two-space indent and a trailing newline: the same value always gives the same bytes, so a file
 * of the review store diffs and merges line by line. `undefined` members are left out, as
 * `JSON.stringify` does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2) + '\n';
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}
