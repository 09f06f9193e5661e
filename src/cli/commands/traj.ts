import { printableLines } from '../../core/untrusted';
import { Command } from 'commander';
import { importFiles, summarize, type TrajectorySummary } from '../../core/trajectory/import';
import type { Trajectory } from '../../core/trajectory/types';
import { readPriceTable } from '../../core/llm/ledger';
import { fileTotals, usageTotals } from '../../core/viewer/usage';
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
    .description('read trajectory files and report each trajectory: steps, events mapped of all its events, redactions, problems')
    .action(async (files: string[], opts) => {
      const trajectories: TrajectorySummary[] = [];
      const r = await importFiles(files, (t) => { trajectories.push(summarize(t)); });
      if (opts.json) printJson({ trajectories, files: r.files, problems: r.problems });
      else {
        for (const t of trajectories) {
          console.log(`${t.format}\t${t.id}\t${t.task ?? '-'}\t${plural(t.steps, 'step')}\t${mappedWords(t)}\t${t.redactions} redacted\t${plural(t.problems.length, 'problem')}`);
        }
        for (const p of r.problems) console.log(printableLines(`${p.severity.padEnd(7)} ${p.file}${p.entry ? `!${p.entry}` : ''}${p.line ? `:${p.line}` : ''}#${p.pointer} ${p.message}`));
        console.error(`${plural(trajectories.length, 'trajectory', 'trajectories')} from ${plural(files.length, 'file')}, ${r.files.filter((f) => f.unreadable).length} unreadable or of no known format`);
      }
      process.exitCode = r.files.some((f) => f.unreadable) ? 2 : 0;
    });

  traj.command('show').argument('<file>', 'a trajectory file, or an OpenHands event folder')
    .option('--step <n>', 'show only step N (0-based), in full')
    .option('--id <id>', 'the trajectory to show when the file holds several (default: the first by sample id, then epoch)')
    .option('--prices <file>', 'a price table (JSON {model: {inputPerMTok, outputPerMTok, cacheReadPerMTok?, cacheWritePerMTok?}}, USD per 1M tokens) for calls whose log states no cost')
    .option('--json', 'print the trajectory (or the step) as JSON, with `usage` (tokens per kind and cost), `totalTokens` (the trajectory\'s own total) and `fileTotals` (the file\'s)')
    .description('show the steps of a trajectory')
    .action(async (file: string, opts) => {
      const prices = opts.prices ? await readPriceTable(opts.prices) : {};
      const all: Trajectory[] = [];
      const r = await importFiles([file], (t) => { all.push(t); });
      const ids = all.map((t) => t.id);
      // without --id: the first sample by (id, epoch), numbers before text as Inspect sorts ids
      const chosen: Trajectory | undefined = opts.id ? all.find((t) => t.id === opts.id) : [...all].sort(bySample)[0];
      process.exitCode = r.files.some((f) => f.unreadable) ? 2 : 0;
      if (!chosen) {
        for (const p of r.problems) console.error(printableLines(`${p.severity} ${p.file}#${p.pointer} ${p.message}`));
        return fail(opts.id ? `no trajectory ${opts.id} in ${file} (it holds ${ids.join(', ') || 'none'})` : `${file} holds no trajectory`, r.files.some((f) => f.unreadable) ? 2 : 1);
      }
      const t: Trajectory = chosen;
      if (opts.step !== undefined) {
        const n = Number(opts.step);
        const s = Number.isInteger(n) ? t.steps[n] : undefined;
        if (!s) return fail(`${file}: no step ${opts.step} (the trajectory has ${plural(t.steps.length, 'step')}, 0..${t.steps.length - 1})`, 1);
        if (opts.json) printJson(s);
        else console.log(printableLines(stepText(s, Infinity)));
        return;
      }
      const usage = usageTotals(t, prices);
      if (opts.json) { printJson({ ...t, usage, totalTokens: usage.totalTokens, fileTotals: fileTotals(all, prices), problems: [...t.problems, ...r.problems] }); return; }
      console.log(`${t.format} ${t.id}${t.task ? ` (task ${t.task})` : ''}: ${plural(t.steps.length, 'step')}, ${plural(t.redactions, 'secret')} redacted${ids.length > 1 ? `; the file holds ${plural(ids.length, 'trajectory', 'trajectories')} (--id)` : ''}`);
      console.log(`tokens ${usage.totalTokens.toLocaleString('en')} (${usage.from}): input ${usage.inputTokens.toLocaleString('en')}, output ${usage.outputTokens.toLocaleString('en')}, cache read ${usage.cacheReadTokens.toLocaleString('en')}, cache write ${usage.cacheWriteTokens.toLocaleString('en')}, reasoning ${usage.reasoningTokens.toLocaleString('en')}; cost ${usage.costUsd === null ? 'unpriced' : `$${usage.costUsd.toFixed(4)} (${usage.costFrom})`}${usage.unpricedCalls ? `, ${plural(usage.unpricedCalls, 'call')} unpriced` : ''}`);
      for (const s of t.steps) console.log(printableLines(stepText(s, 300)));
      for (const p of [...t.problems, ...r.problems]) console.log(printableLines(`${p.severity} ${p.pointer || '(file)'} ${p.message}`));
    });

  registerRepo(traj);
}

/** Trajectories in (sample id, epoch) order: numeric ids by value before text ids. */
function bySample(a: Trajectory, b: Trajectory): number {
  const ia = a.sample?.id ?? a.id; const ib = b.sample?.id ?? b.id;
  const c = ia.localeCompare(ib, 'en', { numeric: true });
  return c !== 0 ? c : (a.sample?.epoch ?? 1) - (b.sample?.epoch ?? 1);
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
  if (s.stage || s.purpose) lines[0] += ` (${[s.purpose, s.stage].filter(Boolean).join(', ')})`;
  if (s.reasoning) show(`reasoning${s.reasoning.redacted ? ' (redacted by the provider)' : ''}`, s.reasoning.text ?? s.reasoning.summary ?? '');
  if (s.text) show('text', s.text);
  if (s.action) show('action', s.action.command !== undefined ? `${s.action.tool}: ${s.action.command}` : `${s.action.tool} ${JSON.stringify(s.action.arguments ?? {})}`);
  if (s.observation) show(`observation${s.observation.exitCode !== undefined && s.observation.exitCode !== null ? ` (exit ${s.observation.exitCode})` : ''}`, s.observation.text);
  for (const e of s.edits ?? []) show(`edit ${e.op ?? ''} ${e.path}`, e.diff ?? e.after ?? '');
  for (const x of s.execs ?? []) show(`sandbox ${x.action}${x.exitCode !== undefined && x.exitCode !== null ? ` (exit ${x.exitCode})` : ''}`, x.command ?? x.file ?? '');
  for (const e of s.errors ?? []) show('error', e);
  if (full) lines.push(`  source: ${JSON.stringify(s.source)}`);
  return lines.join('\n');
}

/**
 * The counts of `--json` in words: `4 of 18 events mapped (14 carry no row by design)`; the share
 * `mappedShare` leaves those 14 out, so it is given only as the counts' ratio.
 */
function mappedWords(t: { sourceEvents: number; mappedEvents: number; skippedEvents: number }): string {
  const skipped = t.skippedEvents ? ` (${t.skippedEvents} carry no row by design)` : '';
  return `${t.mappedEvents} of ${plural(t.sourceEvents, 'event')} mapped${skipped}`;
}
