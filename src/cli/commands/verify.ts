import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { ExpBenchError } from '../../core/errors';
import { EventLog } from '../../core/session/events';
import { SessionLayout } from '../../core/layout';
import { collectOrReattach, LogLine, MAX_TIMEOUT_MS, MIN_LOG_CAP_BYTES, runVerification, summary, VerificationRecord, VerifyLimits } from '../../core/verify';
import { recordedVerifyOptions } from '../../core/flows/prepareTask';
import { printJson } from '../output';
import { cancelOnStopSignals } from '../signals';

interface VerifyCliOptions {
  mode: string;
  timeout?: number;
  memory?: number;
  cpus?: number;
  pids?: number;
  network?: boolean;
  image?: string;
  logCap?: number;
  collect?: boolean;
  json?: boolean;
  check?: boolean;
}

const positive = (name: string) => (v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`${name} must be a number ≥ 0, got "${v}"`);
  return n;
};

/** A number in [min, max], said with the option's name otherwise. */
const between = (name: string, min: number, max: number, unit: string) => (v: string): number => {
  const n = positive(name)(v);
  if (n < min || n > max) throw new InvalidArgumentError(`${name} must be between ${min} and ${max} ${unit}, got "${v}"`);
  return n;
};

/**
 * `expbench verify SESSION_DIR [--mode clean|harness] [--timeout S] [--json]`: runs the session's
 * reproduce_exp_bench.sh in a new container and writes private/verify/<runId>/record.json.
 * Exit code 0 when the verifier ran (whatever the script did: see E_clean/E_exit in the record),
 * 1 when it could not (no engine, no image, bad session) or was cancelled (Ctrl-C, SIGTERM, SIGHUP:
 * the container is removed and the record saved as cancelled; a second signal stops at once). With `--check`,
 * exit 3 when the run ran but failed: E of the mode false, or a claimed number not produced.
 * Without --json, output lines go to stderr as they come and a summary to stdout.
 */
export function register(program: Command): void {
  program.command('verify').argument('<session-dir>', 'session folder (holds workspace/ and private/)')
    .option('--mode <mode>', 'clean (fresh tree copied into a new container) or harness (the workspace bind-mounted)', 'clean')
    .option('--timeout <seconds>', `time limit of the script in seconds, from its start (default: the session's recorded environment, else 3600, at most ${Math.floor(MAX_TIMEOUT_MS / 1000)})`,
      between('--timeout', 0.001, Math.floor(MAX_TIMEOUT_MS / 1000), 'seconds'))
    .option('--memory <bytes>', 'memory limit in bytes (0 = none)', positive('--memory'))
    .option('--cpus <n>', 'CPU limit (0 = none)', positive('--cpus'))
    .option('--pids <n>', 'process limit (default 4096, 0 = none)', positive('--pids'))
    .option('--network', 'allow network (default: off)')
    .option('--image <tag>', 'image (default: the session manifest\'s, else expbench/sandbox:1)')
    .option('--log-cap <bytes>', `cap of each stored log in bytes (default 8 MiB, at least ${MIN_LOG_CAP_BYTES})`,
      between('--log-cap', MIN_LOG_CAP_BYTES, Number.MAX_SAFE_INTEGER, 'bytes'))
    .option('--collect', 'do not start a run: collect the last run, or reattach to it while it still runs')
    .option('--json', 'print the verification record as JSON on stdout')
    .option('--check', 'exit 3 when E (of the mode) is false or a claimed number was not produced')
    .description('run reproduce_exp_bench.sh in a clean container and check the conclusion\'s numbers')
    .action(async (dir: string, opts: VerifyCliOptions) => {
      if (opts.mode !== 'clean' && opts.mode !== 'harness') {
        throw new ExpBenchError('BAD_INPUT', `--mode ${opts.mode}`, 'the mode must be clean or harness');
      }
      const layout = new SessionLayout(path.resolve(dir));
      const events = new EventLog(layout.events);
      // Ctrl-C, SIGTERM and SIGHUP: the run is cancelled cleanly (container removed, record saved cancelled).
      const controller = cancelOnStopSignals((sig) => `${sig}: cancelling the verification (the container is stopped and the record saved)…`);
      const onLine = (l: LogLine) => { process.stderr.write(`${l.time} ${l.stream === 'stderr' ? '[stderr] ' : ''}${l.text}\n`); };
      try {
        let record: VerificationRecord | undefined;
        if (opts.collect) {
          const r = await collectOrReattach(layout.root, { signal: controller.signal, onLine, events });
          if (r.kind === 'none') throw new ExpBenchError('BAD_INPUT', layout.root, 'no verification record to collect (private/verify/latest.json is absent)');
          if (r.damaged) process.stderr.write(`expbench: ${r.damaged}\n`);
          record = r.record;
        } else {
          // The session's recorded environment (its curation file's limits and GPUs), then the options.
          const recorded = await recordedVerifyOptions(layout.root);
          const limits: Partial<VerifyLimits> = {
            ...recorded.limits,
            ...(opts.timeout !== undefined ? { timeoutMs: Math.round(opts.timeout * 1000) } : {}),
            ...(opts.memory !== undefined ? { memoryBytes: Math.round(opts.memory) } : {}),
            ...(opts.cpus !== undefined ? { cpus: opts.cpus } : {}),
            ...(opts.pids !== undefined ? { pids: Math.round(opts.pids) } : {}),
            ...(opts.network ? { network: true } : {}),
          };
          if (limits.timeoutMs === 0) throw new ExpBenchError('BAD_INPUT', '--timeout 0', 'the time limit must be > 0 seconds');
          record = await runVerification(layout.root, {
            mode: opts.mode as 'clean' | 'harness', limits, image: opts.image ?? recorded.image, logCapBytes: opts.logCap, signal: controller.signal, events,
            onLine: opts.json ? undefined : onLine,
            onStatus: opts.json ? undefined : (m) => process.stderr.write(`expbench: ${m}\n`),
            onNotice: (m) => process.stderr.write(`expbench: ${m}\n`),
          });
        }
        if (opts.json) printJson(record);
        else {
          console.log(summary(record));
          for (const f of record.lint) console.log(`  lint ${f.severity}: ${f.message}${f.line ? ` (line ${f.line})` : ''}`);
          for (const c of record.E_claims.claims) {
            const d = c.derived;
            const how = c.found ? `found at ${(c.where ?? []).map((w) => `${w.source}:${w.line}`).join(', ')}`
              : d ? `derived (${d.op} of ${d.sources.map((s) => `${s.text} at ${s.source}:${s.line}`).join(' and ')})` : 'NOT found';
            console.log(`  claim ${c.text.padEnd(10)} ${how}  «${c.context}»`);
          }
          if (record.E_claims.note) console.log(`  claims: ${record.E_claims.note}`);
          console.log(`  record: ${path.join(layout.verify, record.runId, 'record.json')}`);
        }
        // a claim found or derived from two printed numbers passes (src/core/verify/claims.ts)
        const passed = (record.mode === 'clean' ? record.E_clean : record.E_exit) && (record.E_claims.allProduced ?? record.E_claims.allFound);
        process.exitCode = opts.check && !passed ? 3 : 0;
      } finally {
        controller.dispose();
      }
    });
}
