import type { ImportSessionResult } from '../../core/flows/importSession';
import type { ImportResult, TrajectorySummary } from '../../core/trajectory/import';
import type { TrajProblem } from '../../core/trajectory/types';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
const where = (p: TrajProblem) => `${p.file}${p.entry ? `!${p.entry}` : ''}${p.line ? `:${p.line}` : ''}${p.pointer ? `#${p.pointer}` : ''}`;

/** The summary "Import Trajectory…" shows: one row per trajectory, then every problem. */
export function trajectorySummaryMarkdown(ts: TrajectorySummary[], r: ImportResult): string {
  const lines = [`# Imported trajectories`, '', `${ts.length} trajectories from ${r.files.length} file(s); ${r.files.filter((f) => f.unreadable).length} unreadable or of no known format.`, ''];
  if (ts.length) {
    lines.push('| trajectory | format | task | steps | events mapped | redacted | problems |', '| --- | --- | --- | ---: | ---: | ---: | ---: |');
    for (const t of ts) lines.push(`| ${cell(t.id)} | ${t.format} | ${t.task ?? '–'} | ${t.steps} | ${Math.round(t.mappedShare * 100)}% | ${t.redactions} | ${t.problems.length} |`);
    lines.push('');
  }
  const all = [...r.problems, ...ts.flatMap((t) => t.problems)];
  if (all.length) {
    lines.push('## Problems', '');
    for (const p of all) lines.push(`- **${p.severity}** \`${cell(where(p))}\`: ${cell(p.message)}`);
  }
  return lines.join('\n') + '\n';
}

/** The import record of "Import as Session…" in words. */
export function importSummaryMarkdown(r: ImportSessionResult): string {
  const lines = [
    `# ${r.trajectory.id} imported as a session of ${r.taskId}`, '',
    `- session: \`${r.sessionDir}\``,
    `- trajectory: ${r.trajectory.format}, ${r.trajectory.steps} steps (recorded as events)`,
    `- commit: \`${r.commit.sha}\` (${r.commit.from})`,
    `- patch: ${r.patch.files.length} file(s): ${r.patch.applied} applied, ${r.patch.failed} refused by git apply, ${r.patch.cut} cut${r.patch.strippedPrefixes.length ? `; host paths stripped: ${r.patch.strippedPrefixes.map((p) => `\`${p}\``).join(', ')}` : ''}`,
  ];
  for (const [name, s] of [['verifier', r.submission?.verify], ['judge', r.submission?.judge]] as const) {
    if (s) lines.push(`- ${name}: ${s.ok ? 'ok' : 'failed'}${s.summary ? ` — ${s.summary}` : ''}${s.error ? ` — ${s.error}` : ''}`);
  }
  if (r.execution) {
    lines.push(`- E: ${r.execution.E === null ? 'not verified' : String(r.execution.E)}`);
    for (const why of r.execution.reasons) lines.push(`  - ${cell(why)}`);
  }
  if (r.problems.length) {
    lines.push('', '## Problems', '');
    for (const p of r.problems) lines.push(`- **${p.severity}** \`${cell(where(p))}\`: ${cell(p.message)}`);
  }
  return lines.join('\n') + '\n';
}
