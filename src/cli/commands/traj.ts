import { Command } from 'commander';
import { importFiles, summarize, type TrajectorySummary } from '../../core/trajectory/import';
import type { Trajectory } from '../../core/trajectory/types';
import { fail, printJson } from '../output';
import { plural } from '../../core/util/plural';
import { registerRepo } from './trajRepo';

/**
 * `expbench traj import FILE… [--json]` and `expbench traj show FILE [--step N] [--json]`: agent
 * trajectories of any known format mapped onto steps (docs/steps.md). Exit codes as for `tasks
 * validate`: 0 when every file was read (problems or not), 2 when some file is no known format or
 * unreadable.
 */
export function register(program: Command): void {
  const traj = program.command('traj').description('import and show agent trajectories (Inspect, OpenHands, SWE-agent, mini-swe-agent, ATIF, EXP-Bench harness, sessions); the repository at a step; compare two runs');

  traj.command('import').argument('<files...>', 'trajectory files (format detected from content)')
    .option('--json', 'print one JSON object {trajectories, files, problems}')
    .description('read trajectory files and report each trajectory: steps, share of events mapped, redactions, problems')
    .action(async (files: string[], opts) => {
      const trajectories: TrajectorySummary[] = [];
      const r = await importFiles(files, (t) => { trajectories.push(summarize(t)); });
      if (opts.json) printJson({ trajectories, files: r.files, problems: r.problems });
      else {
        for (const t of trajectories) {
          console.log(`${t.format}\t${t.id}\t${t.task ?? '-'}\t${plural(t.steps, 'step')}\t${Math.round(t.mappedShare * 100)}% of events mapped\t${t.redactions} redacted\t${plural(t.problems.length, 'problem')}`);
        }
        for (const p of r.problems) console.log(`${p.severity.padEnd(7)} ${p.file}${p.entry ? `!${p.entry}` : ''}${p.line ? `:${p.line}` : ''}#${p.pointer} ${p.message}`);
        console.error(`${plural(trajectories.length, 'trajectory', 'trajectories')} from ${plural(files.length, 'file')}, ${r.files.filter((f) => f.unreadable).length} unreadable or of no known format`);
      }
      process.exitCode = r.files.some((f) => f.unreadable) ? 2 : 0;
    });

  traj.command('show').argument('<file>', 'a trajectory file')
    .option('--step <n>', 'show only step N (0-based), in full')
    .option('--id <id>', 'the trajectory to show when the file holds several (default: the first)')
    .option('--json', 'print the trajectory (or the step) as JSON')
    .description('show the steps of a trajectory')
    .action(async (file: string, opts) => {
      let chosen: Trajectory | undefined;
      const ids: string[] = [];
      const r = await importFiles([file], (t) => { ids.push(t.id); if (!chosen && (!opts.id || t.id === opts.id)) chosen = t; });
      process.exitCode = r.files.some((f) => f.unreadable) ? 2 : 0;
      if (!chosen) {
        for (const p of r.problems) console.error(`${p.severity} ${p.file}#${p.pointer} ${p.message}`);
        return fail(opts.id ? `no trajectory ${opts.id} in ${file} (it holds ${ids.join(', ') || 'none'})` : `${file} holds no trajectory`, r.files.some((f) => f.unreadable) ? 2 : 1);
      }
      const t: Trajectory = chosen;
      if (opts.step !== undefined) {
        const n = Number(opts.step);
        const s = Number.isInteger(n) ? t.steps[n] : undefined;
        if (!s) return fail(`${file}: no step ${opts.step} (the trajectory has ${plural(t.steps.length, 'step')}, 0..${t.steps.length - 1})`, 1);
        if (opts.json) printJson(s);
        else console.log(stepText(s, Infinity));
        return;
      }
      if (opts.json) { printJson({ ...t, problems: [...t.problems, ...r.problems] }); return; }
      console.log(`${t.format} ${t.id}${t.task ? ` (task ${t.task})` : ''}: ${plural(t.steps.length, 'step')}, ${plural(t.redactions, 'secret')} redacted${ids.length > 1 ? `; the file holds ${plural(ids.length, 'trajectory', 'trajectories')} (--id)` : ''}`);
      for (const s of t.steps) console.log(stepText(s, 300));
      for (const p of [...t.problems, ...r.problems]) console.log(`${p.severity} ${p.pointer || '(file)'} ${p.message}`);
    });

  registerRepo(traj);
}

function cut(s: string, max: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}… [${one.length - max} more characters; --step N shows all]` : one;
}

function stepText(s: Trajectory['steps'][number], max: number): string {
  const full = max === Infinity;
  const when = s.time ? `+${(s.time.relMs / 1000).toFixed(1)}s` : '(no time)';
  const lines = [`#${s.index} ${when} ${s.phase}${s.phaseInferred ? '?' : ''} ${s.actor} ${s.kind}${s.model?.model ? ` [${s.model.model}]` : ''}`];
  const show = (label: string, text: string) => lines.push(`  ${label}: ${full ? text : cut(text, max)}`);
  if (s.text) show('text', s.text);
  if (s.action) show('action', s.action.command !== undefined ? `${s.action.tool}: ${s.action.command}` : `${s.action.tool} ${JSON.stringify(s.action.arguments ?? {})}`);
  if (s.observation) show(`observation${s.observation.exitCode !== undefined && s.observation.exitCode !== null ? ` (exit ${s.observation.exitCode})` : ''}`, s.observation.text);
  for (const e of s.edits ?? []) show(`edit ${e.op ?? ''} ${e.path}`, e.diff ?? e.after ?? '');
  for (const e of s.errors ?? []) show('error', e);
  if (full) lines.push(`  source: ${JSON.stringify(s.source)}`);
  return lines.join('\n');
}
