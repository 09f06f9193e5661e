import type { DesignDraft, DesignVariableDraft } from './state';

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

const LINE = /^(Constant|Independent|Dependent)\s*:\s*(.+?)(?:(?:\s+[—-]\s+|:\s+)(.*?))?(?:\s+\(values:\s*(.*)\))?\s*$/i;

/**
 * The structured design read back from harness lines (for answers submitted as JSON by the CLI):
 * lines in the form written by {@link designToHarnessLines} become variables (`: ` also separates
 * name and description, as in `Constant: dataset: CIFAR-10`), the rest free text.
 */
export function designFromHarnessLines(lines: string[]): DesignDraft {
  const d: DesignDraft = { constants: [], independent: [], dependent: [], freeText: '' };
  const free: string[] = [];
  for (const raw of lines) {
    const m = LINE.exec(raw.trim());
    if (!m) { if (raw.trim()) free.push(raw.trim()); continue; }
    const group = LABELS.find(([, l]) => l.toLowerCase() === m[1].toLowerCase())![0];
    const v: DesignVariableDraft = { name: m[2].trim(), description: (m[3] ?? '').trim() };
    if (m[4]) v.values = m[4].split(',').map((x) => x.trim()).filter(Boolean);
    d[group].push(v);
  }
  d.freeText = free.join('\n');
  return d;
}
