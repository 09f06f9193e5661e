import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { archiveInto } from '../git';
import { connectDocker, ensureEngine } from '../sandbox/connection';
import { createContainer, LABEL_OWNER } from '../sandbox/containers';
import { ownerToken } from '../sandbox/processes';
import type { Task } from '../tasks/types';
import { checkClaims, DEFAULT_LIMITS, type ClaimsResult, type VerifyLimits } from '../verify';
import { collectChangedFiles, MAX_CHANGED_FILE_BYTES, MAX_CHANGED_FILES, pipeLines, touchMarker, WRAPPER_DIR } from '../verify/container-io';
import { removeWithRetry } from '../verify/finish';
import { dataMountBinds } from '../verify/mounts';
import { DEFAULT_LOG_CAP_BYTES, readLogText, RunLogs } from '../verify/logs';
import { ensurePristine } from '../workspace/cache';
import { classifySource, defaultCacheDir } from '../workspace/source';
import { resolveTaskPin } from './prepareTask';

/** Default size of the scratch folder the run works in, bytes (1 GiB). */
export const DEFAULT_SCRATCH_BYTES = 1024 * 1024 * 1024;
/** Where the unmasked checkout is extracted in the container: a tmpfs of the scratch size. */
export const SCRATCH_DIR = '/scratch';

/** The record of one validation run (`<out>/validation.json`, docs/curation.md "Validate by running"). */
export interface ValidationRecord {
  version: 1;
  taskId: string;
  /** The repository and full commit the checkout was made from (the pristine cache, never a solver's workspace). */
  source: string;
  commit: string;
  /** Where the pin came from (`option`, `curation`, `source-head`). */
  pinFrom: string;
  image: string;
  /** Where the image came from (`option`, `curation`, `default`). */
  imageFrom: string;
  /** The curator-confirmed command, run with `bash -c` in the checkout's root. */
  command: string;
  /** The curation file's `environment.setup`, run first (`bash -e`, in the checkout's root, same time limit); absent when none. */
  setup?: string[];
  /** A setup command failed: the command was not run and `exitCode` is the setup's. */
  setupFailed?: boolean;
  /** The curation file's read-only data mounts (host → container) the run had. */
  mounts?: Array<{ host: string; container: string }>;
  limits: VerifyLimits;
  /** Size cap of the scratch folder (tmpfs) holding the checkout and everything the run writes, bytes. */
  scratchBytes: number;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  /** Exit code of the command; null when it was killed at the time limit. */
  exitCode: number | null;
  timedOut: boolean;
  /**
   * The scratch folder was full at the end (used ≥ cap − 1 MiB, read with `df` in the container) or
   * the output says `No space left on device`.
   */
  diskFull: boolean;
  /** Bytes used in the scratch folder at the end (undefined when the run was killed before `df`). */
  scratchUsedBytes?: number;
  /** The three logs, relative to the output folder. */
  logs: { stdout: string; stderr: string; combined: string };
  logTruncated: boolean;
  /** `expected_outcome`'s numbers checked against the logs and the text files the run wrote (the verifier's claims check). */
  claims: ClaimsResult;
  /** Files the run wrote that were searched (relative to the checkout). */
  changedFiles: string[];
}

export interface ValidateOptions {
  task: Task;
  /** The command to run (`bash -c`), in the checkout's root. */
  run: string;
  /** Output folder (created): logs and `validation.json`. */
  out: string;
  source?: string;
  commit?: string;
  image?: string;
  cacheDir?: string;
  /** Overrides of the verifier's limits (after the curation file's `environment.limits`). */
  limits?: Partial<VerifyLimits>;
  scratchBytes?: number;
  docker?: Docker;
  signal?: AbortSignal;
  onStatus?: (m: string) => void;
}

/**
 * Validates a task by running its ground truth: resolves the pin and the environment like
 * `prepare` ({@link resolveTaskPin}), takes the unmasked tree at the pin from the pristine cache
 * (`git archive`), streams it into a new container (the verifier's create/limits/log code) into a
 * tmpfs scratch folder of `scratchBytes` (the only writable place the run's data lives in, so a run
 * that fills it gets ENOSPC), runs `bash -c <run>` as `solver`, kills it at the time limit, and
 * checks `expected_outcome` with the claims check over its logs and the text files it wrote.
 * Writes `<out>/validation.json` and the logs. A failing, hanging or disk-filling command is a
 * recorded result, not an error.
 * @throws ExpBenchError SOURCE_UNAVAILABLE / BAD_INPUT (no repository, no such commit, bad curation
 *   file), DOCKER_UNAVAILABLE, IMAGE_MISSING, CONTAINER_FAILED, CANCELLED
 */
export async function validateTask(o: ValidateOptions): Promise<ValidationRecord> {
  const status = o.onStatus ?? (() => undefined);
  const pin = await resolveTaskPin(o.task, { source: o.source, commit: o.commit, image: o.image });
  const env = pin.environment;
  const limits: VerifyLimits = {
    ...DEFAULT_LIMITS,
    ...(env.limits?.timeSeconds ? { timeoutMs: env.limits.timeSeconds * 1000 } : {}),
    ...(env.limits?.memoryMiB ? { memoryBytes: env.limits.memoryMiB * 1024 * 1024 } : {}),
    ...o.limits,
  };
  const setup = env.setup ?? [];
  const mounts = env.mounts ?? [];
  const mountBinds = await dataMountBinds(mounts);
  const scratchBytes = o.scratchBytes ?? DEFAULT_SCRATCH_BYTES;
  if (!Number.isSafeInteger(scratchBytes) || scratchBytes < 1024 * 1024) throw new ExpBenchError('BAD_INPUT', `scratch size ${scratchBytes}`, 'the scratch size must be a whole number of bytes ≥ 1 MiB');
  status(`getting ${pin.source}${pin.commit ? ` at ${pin.commit}` : ''}`);
  const pristine = await ensurePristine({ source: await classifySource(pin.source), commit: pin.commit, cacheDir: o.cacheDir ?? defaultCacheDir(), signal: o.signal });
  const out = path.resolve(o.out);
  const wrapperDir = path.join(out, 'out');
  await fsp.mkdir(wrapperDir, { recursive: true });
  await fsp.chmod(wrapperDir, 0o777);
  const docker = o.docker ?? connectDocker();
  await ensureEngine(docker);
  const created = await createContainer(docker, {
    image: env.image,
    labels: { task: o.task.id, session: `validate-${path.basename(out)}`, role: 'verify' },
    binds: [{ hostPath: wrapperDir, containerPath: WRAPPER_DIR }, ...mountBinds],
    tmpfs: { [SCRATCH_DIR]: `size=${scratchBytes},exec,mode=1777` },
    limits: {
      network: limits.network, gpus: limits.gpus,
      ...(limits.memoryBytes > 0 ? { memoryBytes: limits.memoryBytes } : {}),
      ...(limits.cpus > 0 ? { cpus: limits.cpus } : {}),
      ...(limits.pids > 0 ? { pids: limits.pids } : {}),
    },
    cmd: ['bash', '-c', wrapperScript(limits.timeoutMs / 1000 + 30)],
    env: { HOME: '/home/solver', PYTHONUNBUFFERED: '1', MPLBACKEND: 'Agg', EXPBENCH_RUN: o.run, EXPBENCH_SETUP: setup.join('\n') },
    openStdin: true, user: 'solver', workdir: '/tmp', start: false,
    extraLabels: { [LABEL_OWNER]: ownerToken() },
  });
  const logPaths = { stdout: path.join(out, 'stdout.log'), stderr: path.join(out, 'stderr.log'), combined: path.join(out, 'combined.log') };
  const logs = new RunLogs(logPaths, DEFAULT_LOG_CAP_BYTES);
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => { void created.container.kill().catch(() => undefined); };
  try {
    await logs.open();
    const stream = await created.container.attach({ stream: true, stdout: true, stderr: true, stdin: true, hijack: true });
    const drained = pipeLines(docker, stream, (l) => logs.add(l), false);
    await created.container.start();
    const startedAt = new Date();
    status(`running in ${env.image} (limit ${limits.timeoutMs / 1000} s, scratch ${scratchBytes} bytes)`);
    await archiveInto(pristine.repo, pristine.commit, stream as unknown as NodeJS.WritableStream);
    timer = setTimeout(() => { timedOut = true; void created.container.kill().catch(() => undefined); }, limits.timeoutMs);
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const waited = await created.container.wait() as { StatusCode: number };
    clearTimeout(timer);
    const endedAt = new Date();
    await drained;
    await logs.close();
    const df = await fsp.readFile(path.join(wrapperDir, 'df'), 'utf8').catch(() => '');
    const used = Number(df.trim().split(/\s+/)[2]);
    const stdout = await readLogText(logPaths.stdout);
    const stderr = await readLogText(logPaths.stderr);
    const changed = (await collectChangedFiles(wrapperDir)).map((f) => ({ ...f, source: f.source.replace(/^\/?scratch\/repo\//, '') }));
    const setupFailed = await fsp.stat(path.join(wrapperDir, 'setup-failed')).then(() => true, () => false);
    const diskFull = (Number.isFinite(used) && used >= scratchBytes - 1024 * 1024) || /No space left on device/.test(stdout + stderr);
    if (o.signal?.aborted) throw new ExpBenchError('CANCELLED', o.task.id, 'the validation run was cancelled');
    const record: ValidationRecord = {
      version: 1, taskId: o.task.id, source: pin.source, commit: pristine.commit, pinFrom: pin.pin.from,
      image: env.image, imageFrom: env.from, command: o.run,
      ...(setup.length ? { setup, setupFailed } : {}), ...(mounts.length ? { mounts: mounts.map((m) => ({ host: m.host, container: m.container })) } : {}),
      limits, scratchBytes,
      startedAt: startedAt.toISOString(), endedAt: endedAt.toISOString(), durationMs: endedAt.getTime() - startedAt.getTime(),
      exitCode: timedOut ? null : waited.StatusCode, timedOut, diskFull,
      ...(Number.isFinite(used) ? { scratchUsedBytes: used } : {}),
      logs: { stdout: 'stdout.log', stderr: 'stderr.log', combined: 'combined.log' }, logTruncated: logs.truncated,
      claims: checkClaims(o.task.expectedOutcome, [
        { source: 'stdout.log', text: stdout }, { source: 'stderr.log', text: stderr }, ...changed,
      ]),
      changedFiles: changed.map((f) => f.source),
    };
    await fsp.writeFile(path.join(out, 'validation.json'), JSON.stringify(record, null, 2) + '\n');
    return record;
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
    await logs.close().catch(() => undefined);
    await removeWithRetry(docker, created.id);
    await fsp.rm(wrapperDir, { recursive: true, force: true });
  }
}

/**
 * The container's command: extracts the tree arriving on stdin into /scratch/repo (a cut stream:
 * exit 125, nothing run), runs the environment's setup (`$EXPBENCH_SETUP`, `bash -e`; a failure is
 * marked and the command not run), then `$EXPBENCH_RUN` there, both under a `timeout` backstop, then
 * records the scratch folder's use (`df`) and archives the text files the command wrote after the
 * setup (the verifier's bounds).
 */
function wrapperScript(backstopSeconds: number): string {
  return [
    `mkdir -p ${SCRATCH_DIR}/repo && tar -xf - -C ${SCRATCH_DIR}/repo || { echo 'expbench: the checkout did not arrive complete (or the scratch folder is too small for it); nothing was run' >&2; exit 125; }`,
    'exec </dev/null',
    `cd ${SCRATCH_DIR}/repo`,
    'code=0',
    `if [ -n "$EXPBENCH_SETUP" ]; then timeout -k 5 ${Math.ceil(backstopSeconds)} bash -ec "$EXPBENCH_SETUP"; code=$?; fi`,
    `if [ $code -ne 0 ]; then echo "expbench: the environment's setup failed (exit $code); the command was not run" >&2; touch ${WRAPPER_DIR}/setup-failed; fi`,
    touchMarker(`${WRAPPER_DIR}/start`),
    `if [ $code -eq 0 ]; then timeout -k 5 ${Math.ceil(backstopSeconds)} bash -c "$EXPBENCH_RUN"; code=$?; fi`,
    `df -P -B1 ${SCRATCH_DIR} | tail -n 1 > ${WRAPPER_DIR}/df`,
    `{ find ${SCRATCH_DIR}/repo -xdev -type f -newer ${WRAPPER_DIR}/start -size -${MAX_CHANGED_FILE_BYTES / 1024 + 1}k -not -path '*/.git/*' -print0`
      + ` | head -z -n ${MAX_CHANGED_FILES} | tar --null -T - -cf ${WRAPPER_DIR}/changed.tar; } </dev/null >/dev/null 2>&1`,
    'exit $code',
  ].join('\n');
}

