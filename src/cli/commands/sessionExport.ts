import * as path from 'node:path';
import type { Command } from 'commander';
import { ExpBenchError } from '../../core/errors';
import { exportSessionInspect, INSPECT_EXPORT_FORMATS, type InspectExportFormat } from '../../core/flows/exportInspect';
import { plural } from '../../core/util/plural';
import { printJson } from '../output';

/**
 * `expbench session export DIR --format inspect-eval|inspect-json --out FILE [--json]`: the
 * session (a human's or an agent's) as an Inspect AI log (src/core/flows/exportInspect.ts, the
 * mapping in src/core/trajectory/inspectWrite.ts): phases as spans, the agent's model and tool
 * calls as `model` and `tool` events, the judge's verdicts as the sample's score. Prints one line
 * (or the result as JSON); exit 0 when the log was written, 1 otherwise.
 */
export function registerExport(session: Command): void {
  session.command('export').argument('<dir>', 'session folder (holds workspace/ and private/)')
    .requiredOption('--format <format>', `log format: ${INSPECT_EXPORT_FORMATS.join(' or ')} (Inspect AI's .eval zip or .json log)`)
    .requiredOption('--out <file>', 'the log file to write (replaced if it exists)')
    .option('--json', 'print the result {file, format, bytes, task, solver, counts, scores, invalidLines} as JSON')
    .description('export the session as an Inspect AI log (phases as spans; model, tool and score events)')
    .action(async (dir: string, opts: { format: string; out: string; json?: boolean }) => {
      if (!(INSPECT_EXPORT_FORMATS as readonly string[]).includes(opts.format)) {
        throw new ExpBenchError('BAD_INPUT', '--format', `unknown export format "${opts.format}": use ${INSPECT_EXPORT_FORMATS.join(' or ')}`);
      }
      const r = await exportSessionInspect(path.resolve(dir), opts.out, opts.format as InspectExportFormat);
      if (opts.json) { printJson(r); return; }
      const c = r.counts;
      console.log(`${r.task}: ${r.solver} session exported as ${r.format} to ${r.file} (${r.bytes} bytes): ${plural(c.events, 'event')} (${plural(c.spans, 'phase span')}, ${plural(c.model, 'model call')}, ${plural(c.tool, 'tool call')}, ${plural(c.sandbox, 'run')}, ${plural(c.scores, 'score')})`);
      if (r.invalidLines) console.error(`expbench: warning: ${plural(r.invalidLines, 'invalid line')} of the event log left out`);
    });
}
