import { ENV_RUNSET, ENV_RUNSET_UNIT, LABEL_RUNSET, LABEL_UNIT } from '../../sandbox/containers';
import { ENV_EXIT_FILE } from '../local';
import type { Resources } from '../types';
import { slurmMinutes } from './parse';

/** `'…'` for bash: single quotes, each `'` inside as `'\''`. Safe for any string without NUL. */
export function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A name Slurm takes in `--export` and bash in `export`: letters, digits and `_`, not starting with a digit. */
export function isEnvName(n: string): boolean {
  return /^[A-Za-z_]\w*$/.test(n);
}

/** One element of an array job: one unit's try. */
export interface ArrayElement {
  unit: string;
  /** The CLI's arguments (`runs exec DIR --unit KEY --try N`). */
  args: string[];
  /** The unit's log (absolute); its exit record goes beside it (`<log>.exit.json`). */
  logFile: string;
}

/** What {@link jobScript} writes. */
export interface JobScriptInput {
  /** The job's name (`expbench-<run set>-<shape>-<random>`): a submission is found again by it. */
  name: string;
  runSet: string;
  /** A line for people: the run set's name and the shape. */
  title: string;
  resources: Resources;
  elements: ArrayElement[];
  /** The array's `%k`: at most this many elements run at once. */
  throttle: number;
  partition?: string;
  account?: string;
  qos?: string;
  /** Names of the environment variables the job gets from sbatch's environment, which holds only these and Slurm's own (values never in the script). */
  exportNames: string[];
  /** Plain (non-secret) environment of every element, written into the script. */
  env: Record<string, string>;
  /** The working folder of every element (the run set's folder). */
  cwd: string;
  /** How to start the CLI on the node: node (tried first; else `node` on the node's PATH) and the bundle. */
  node: string;
  cliArgs: string[];
  /**
   * The SHA-256 (hex) `cliArgs[0]` must have when the job starts (the copy in the shared folder,
   * stage.ts): checked first, a job whose CLI was changed since it was staged stops (exit 1) without starting it.
   */
  cliSha256?: string;
  /** The engine the unit's containers run in: `docker` (its socket, or DOCKER_HOST) or `podman` (a per-job API service). */
  container: 'docker' | 'podman';
}

/**
 * The batch script of one job array (docs/placement.md "The job"): `#SBATCH` lines with the
 * shape's resources (`--cpus-per-task`, `--mem`, `--time`, `--gres=gpu:N`), the throttle
 * (`--array=0-N%k`), `--no-requeue` (an interrupted element ends, and the run set places its unit
 * again as a new try, resumed from its session), `--export=ALL` of an sbatch environment that holds
 * only the passed variables (their names in a comment, values never in the script); then tables
 * of the elements (unit keys, logs, the CLI's arguments), and for element `$SLURM_ARRAY_TASK_ID`: its output
 * into its unit's log, the run set's labels and the exit record's path in its environment, the
 * container engine (podman: an API service of its own for the job, as DOCKER_HOST), and the CLI.
 * Slurm sends SIGTERM to every process of the job on `scancel` and at the time limit, so the
 * script does not forward it (the CLI would take a second one as "leave now"); it waits for the
 * CLI and exits with its status. When the CLI was killed (status > 128) the unit's containers on
 * this node are removed by label.
 * Nothing secret is in the script: keys reach the job through the environment named in `--export`.
 */
export function jobScript(i: JobScriptInput): string {
  const r = i.resources;
  const sb: string[] = [
    `--job-name=${i.name}`,
    `--array=0-${i.elements.length - 1}%${i.throttle}`,
    '--nodes=1', '--ntasks=1',
    `--cpus-per-task=${r.cpus}`,
    `--mem=${r.memoryMiB}M`,
    `--time=${slurmMinutes(r.timeSeconds)}`,
    ...(r.gpus > 0 ? [`--gres=gpu:${r.gpus}`] : []),
    ...(i.partition ? [`--partition=${i.partition}`] : []),
    ...(i.account ? [`--account=${i.account}`] : []),
    ...(i.qos ? [`--qos=${i.qos}`] : []),
    '--no-requeue',
    // sbatch runs with only the passed names in its environment (src/core/placement/slurm/placement.ts): ALL
    // hands on exactly those, where a list of names would make slurmd load the user's login environment too
    // (`--get-user-env`, implied by a list without ALL: about a second per job, and more than was asked for).
    '--export=ALL',
  ];
  const table = (xs: string[]) => `(\n${xs.map((x) => `  ${shq(x)}`).join('\n')}\n)`;
  const argsCases = i.elements.map((e, k) => `  ${k}) set -- ${e.args.map(shq).join(' ')} ;;`);
  const plainEnv = Object.entries(i.env).filter(([k]) => isEnvName(k)).map(([k, v]) => `export ${k}=${shq(v)}`);
  const podman = i.container === 'podman' ? [
    '# podman: an API service of the job\'s own, on a socket only its user can reach, as DOCKER_HOST of the CLI',
    'sock_dir=$(mktemp -d "${TMPDIR:-/tmp}/expbench-podman.XXXXXX") || exit 75',
    'podman system service --time=0 "unix://$sock_dir/podman.sock" & svc=$!',
    'for _ in $(seq 1 100); do [[ -S $sock_dir/podman.sock ]] && break; sleep 0.1; done',
    '[[ -S $sock_dir/podman.sock ]] || { echo "expbench: podman system service did not start on $(hostname)"; exit 75; }',
    'export DOCKER_HOST="unix://$sock_dir/podman.sock"',
    'trap \'kill "$svc" 2>/dev/null; rm -rf "$sock_dir"\' EXIT',
  ] : [];
  const engine = i.container;
  return [
    '#!/bin/bash',
    `# EXP-Bench Workbench: run set ${oneLine(i.runSet)}, ${oneLine(i.title)}; ${i.elements.length} unit(s).`,
    '# Written by the Slurm placement (docs/placement.md): each array element runs one unit with the project\'s CLI.',
    ...sb.map((o) => `#SBATCH ${o}`),
    `# The environment from the submitter: ${i.exportNames.length ? i.exportNames.join(' ') : 'none'} (and Slurm's own SLURM_*).`,
    'set -u',
    `units=${table(i.elements.map((e) => e.unit))}`,
    `logs=${table(i.elements.map((e) => e.logFile))}`,
    'i=${SLURM_ARRAY_TASK_ID:?not an element of an array job}',
    'log=${logs[$i]}',
    'exec >>"$log" 2>&1',
    'echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) slurm job ${SLURM_ARRAY_JOB_ID}_${i} (job ${SLURM_JOB_ID}) on $(hostname): unit ${units[$i]}"',
    ...plainEnv,
    `export ${ENV_RUNSET}=${shq(i.runSet)} ${ENV_RUNSET_UNIT}="\${units[$i]}" ${ENV_EXIT_FILE}="$log.exit.json"`,
    `cd ${shq(i.cwd)} || exit 75`,
    `node_bin=${shq(i.node)}`,
    '[[ -x $node_bin ]] || node_bin=$(command -v node) || { echo "expbench: no node on $(hostname) (set EXPBENCH_NODE, or put node >= 20 on the PATH of the nodes)"; exit 75; }',
    ...podman,
    '# Slurm signals every process of the job (scancel, time limit): the CLI stops cleanly on its own SIGTERM.',
    'trap \'echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) slurm: SIGTERM (scancel or time limit): the unit stops cleanly"\' TERM',
    'case $i in',
    ...argsCases,
    '  *) echo "expbench: no element $i in this array"; exit 1 ;;',
    'esac',
    ...(i.cliSha256 ? [
      `cli_sum=$(sha256sum < ${shq(i.cliArgs[0])}) && [[ \${cli_sum%% *} == ${shq(i.cliSha256)} ]] || { echo "expbench: "${shq(i.cliArgs[0])}" is not the CLI that was staged for this job (its SHA-256 differs): not started"; exit 1; }`,
    ] : []),
    `"$node_bin" ${i.cliArgs.map(shq).join(' ')} "$@" &`,
    'child=$!',
    'while :; do wait "$child"; rc=$?; kill -0 "$child" 2>/dev/null || break; done',
    // A wait cut short by a signal said 128+n even when the child exited just then: bash keeps its status.
    'if (( rc > 128 )); then wait "$child" 2>/dev/null; r2=$?; (( r2 != 127 )) && rc=$r2; fi',
    'if (( rc > 128 )); then',
    `  ids=$(${engine} ps -aq --filter label=${LABEL_RUNSET}=${shq(i.runSet)} --filter label=${LABEL_UNIT}="\${units[$i]}" 2>/dev/null)`,
    `  [[ -n $ids ]] && ${engine} rm -f $ids >/dev/null 2>&1 && echo "expbench: the unit's process was killed (status $rc): its containers here removed"`,
    'fi',
    'exit "$rc"',
    '',
  ].join('\n');
}

function oneLine(s: string): string {
  return s.replace(/[\r\n]+/g, ' ');
}
