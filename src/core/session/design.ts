import type { DesignDraft, DesignVariableDraft } from './state';
import { hasLineTerminator, isSpace, trimStartOf } from '../untrusted';

/**
 * Conversion between the structured design (constant / independent / dependent variables, the
 * groups of EXP-Bench's `design_complexity`) and the harness's `design`, a list of strings.
 *
 * One line per variable: `Constant: <name> — <description>`, `Independent: <name> — <description>
 * (values: a, b)`, `Dependent: <name> — <description>`; then each non-empty line of the free text.
 * The judge reads the lines as text, so the labels are plain words.
 */
const LABELS: Array<[keyof Omit<DesignDraft, 'freeText'>, string]> = [
  ['constants', 'Constant'],
  ['independent', 'Independent'],
  ['dependent', 'Dependent'],
];

/** The harness `design` list for a structured design. Variables without a name are skipped. */
export function designToHarnessLines(d: DesignDraft): string[] {
  const out: string[] = [];
  for (const [group, label] of LABELS) {
    for (const v of d[group]) {
      if (!v.name.trim()) continue;
      out.push(variableLine(label, v));
    }
  }
  for (const line of d.freeText.split(/\r?\n/)) if (line.trim()) out.push(line.trim());
  return out;
}

function variableLine(label: string, v: DesignVariableDraft): string {
  let line = `${label}: ${v.name.trim()}`;
  if (v.description.trim()) line += ` — ${v.description.trim()}`;
  if (v.values?.length) line += ` (values: ${v.values.join(', ')})`;
  return line;
}

const LABEL = /^(Constant|Independent|Dependent)\s*:\s*/i;
const VALUES = /\s+\(values:/iy;
const DASH_SEPARATOR = /\s+[—-]\s+/y;
const COLON_SEPARATOR = /:\s+/y;

/**
 * One harness line read as a variable: label, name, description and values, or undefined. The
 * name ends at the first separator (` — `, ` - ` or `: `) or at a ` (values: …)` that ends the
 * line; the description ends at that ` (values: …)`. One pass over the line (the expression this
 * replaces, with a lazy name, a lazy description and `\s*` beside them, was polynomial on long
 * runs of spaces).
 */
export function variableFromLine(t: string): { label: string; name: string; description?: string; values?: string } | undefined {
  if (hasLineTerminator(t)) return undefined;
  const m = LABEL.exec(t);
  if (!m) return undefined;
  const start = m[0].length;
  const valuesAt = (i: number): string | undefined => {
    if (!t.endsWith(')')) return undefined;
    VALUES.lastIndex = i;
    if (!VALUES.test(t) || VALUES.lastIndex > t.length - 1) return undefined;
    return trimStartOf(t.slice(VALUES.lastIndex, t.length - 1), isSpace);
  };
  for (let p = start + 1; p <= t.length; p++) {
    if (p === t.length) return { label: m[1], name: t.slice(start) };
    if (isSpace(t[p - 1]) && isSpace(t[p])) continue; // inside a run of spaces: tried at its start
    DASH_SEPARATOR.lastIndex = p;
    COLON_SEPARATOR.lastIndex = p;
    const sep = DASH_SEPARATOR.test(t) ? DASH_SEPARATOR.lastIndex : COLON_SEPARATOR.test(t) ? COLON_SEPARATOR.lastIndex : -1;
    if (sep >= 0) {
      for (let q = sep; q <= t.length; q++) {
        // a run of spaces is tried at its start only (a match later in it would also match there)
        const values = q < t.length && isSpace(t[q]) && !isSpace(t[q - 1]) ? valuesAt(q) : undefined;
        if (values !== undefined) return { label: m[1], name: t.slice(start, p), description: t.slice(sep, q), values };
      }
      return { label: m[1], name: t.slice(start, p), description: t.slice(sep) };
    }
    if (isSpace(t[p])) {
      const values = valuesAt(p);
      if (values !== undefined) return { label: m[1], name: t.slice(start, p), values };
    }
  }
  return undefined;
}

/**
 * The structured design read back from harness lines (for answers submitted as JSON by the CLI):
 * lines in the form written by {@link designToHarnessLines} become variables (`: ` also separates
 * name and description, as in `Constant: dataset: CIFAR-10`), the rest free text.
 */
export function designFromHarnessLines(lines: string[]): DesignDraft {
  const d: DesignDraft = { constants: [], independent: [], dependent: [], freeText: '' };
  const free: string[] = [];
  for (const raw of lines) {
    const m = variableFromLine(raw.trim());
    if (!m) { if (raw.trim()) free.push(raw.trim()); continue; }
    const group = LABELS.find(([, l]) => l.toLowerCase() === m.label.toLowerCase())![0];
    const v: DesignVariableDraft = { name: m.name.trim(), description: (m.description ?? '').trim() };
    if (m.values) v.values = m.values.split(',').map((x) => x.trim()).filter(Boolean);
    d[group].push(v);
  }
  d.freeText = free.join('\n');
  return d;
}
