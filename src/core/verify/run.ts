import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { ExpBenchError, cancelled, isExpBenchError } from '../errors';
import { log } from '../log';
import { connectDocker, dockerError, ensureEngine, isLocalEngine } from '../sandbox/connection';
import { createContainer, LABEL_OWNER, LABEL_ROLE, removeOrphans } from '../sandbox/containers';
import { ownerGone, ownerToken, sweepDeadOwners } from '../sandbox/processes';
import { DEFAULT_IMAGE, inspectImage } from '../sandbox/images';
import { dataMountBinds, type DataMount } from './mounts';
import type { EventSink } from '../session/events';
import { SessionLayout } from '../layout';
import { exists, readJsonIfExists } from '../util/fs';
import { assertPreparationFinished } from '../workspace/folder';
import { changedSince, frozenSubmission } from '../workspace/freeze';
import { openHostRepository } from '../workspace/hostRepo';
import { snapshotWorkTree } from '../workspace/snapshot';
import { catFileBatch } from '../git';
import { allSettledOrThrow } from '../util/promises';
import { feedTree, pipeLines, treeMarkerName, WRAPPER_DIR, wrapperCommand } from './container-io';
import { removeWithRetry, watchToEnd } from './finish';
import { asVerifyError } from './ioErrors';
import { lintScript } from './lint';
import { DEFAULT_LOG_CAP_BYTES, LogLine, MIN_LOG_CAP_BYTES, RunLogs } from './logs';
import { MAX_CHANGED_AFTER_SUBMIT, MAX_TIMEOUT_MS, newRunId, readRecord, saveRecord, VerificationRecord, type VerifyInput, VerifyLimits, VerifyMode, VerifyRunPaths } from './record';
import { markWatched, settlePrevious } from './reattach';
import { buildVerifyTree } from './tree';
import { errorMessage } from '../util/errors';
import { LIMITS, readUntrustedText } from '../untrusted';

const logger = log('verify');
const execFileP = promisify(execFile);

/** Default limits: one hour (the harness's limit), no network, at most 4096 processes. */
export const DEFAULT_LIMITS: VerifyLimits = {
  timeoutMs: 3_600_000, memoryBytes: 0, cpus: 0, pids: 4096, network: false, gpus: false,
};

/** The command the verifier runs in /workspace (EXP-Bench harness, step 5). */
export const VERIFY_COMMAND = ['bash', 'reproduce_exp_bench.sh'];

export interface VerifyOptions {
  /**
   * `clean` (default): a fresh tree copied into a new container. `harness`: bind-mounted at
   * /workspace as the reference harness mounts its workspace: a checkout of the frozen submission
   * for a submitted session (never its live workspace), the live workspace for one not submitted
   * yet (see {@link runVerification}).
   */
  mode?: VerifyMode;
  /** Image tag; default the session manifest's `image`, else `expbench/sandbox:1`. */
  image?: string;
  /** Overrides of {@link DEFAULT_LIMITS}; 0 means "no limit" for memory, cpus and pids. */
  limits?: Partial<VerifyLimits>;
  /** Cap of each stored log, bytes (default 8 MiB). */
  logCapBytes?: number;
  /** Cancels the run: the container is killed, the record saved with `cancelled: true`, CANCELLED thrown. */
  signal?: AbortSignal;
  docker?: Docker;
  /** Every output line as it arrives. */
  onLine?: (line: LogLine) => void;
  /** Progress messages (`building the clean tree`, `running`…). */
  onStatus?: (message: string) => void;
  /** What a user must be told even when progress is not shown: an earlier run's record repaired (default: `onStatus`). */
  onNotice?: (message: string) => void;
  /** When given, a `verify.finished` event is appended to it at the end. */
  events?: EventSink;
  /** Called once the `running` record is saved (the run id and container are known). */
  onStarted?: (record: VerificationRecord) => void;
}

/**
 * Verifies a session: runs `bash reproduce_exp_bench.sh` in /workspace as the image's non-root
 * user `solver`, in a NEW container, and writes the verification record (see record.ts).
 *
 * What is verified, in both modes (the record's `input`): a submitted session's frozen
 * submission (the commit made at Submit in the host repository, src/core/workspace/freeze.ts),
 * never its live workspace, whose changes since Submit are named in the record; a session not
 * submitted yet, its work tree taken as the patch takes it when the run starts. The tree is
 * built in a temporary folder (tree.ts). Clean mode copies it in as a tar stream (no bind
 * mount); harness mode bind-mounts that folder at /workspace, as the reference harness mounts its
 * workspace, and runs as the folder owner's uid:gid; for a session not submitted yet it mounts the
 * live workspace itself, as the reference harness does (ignored files included; the record's
 * `input` then names the tree taken when the run started, without them). Before the container is created, verify containers left by a crash are removed
 * (running ones of other sessions are kept: another window may be watching them), and a
 * still-`running` record of this session is settled first (collected, or refused when it is
 * really still running).
 *
 * A record with status `running` and the container id is saved before the container starts, so a
 * reloaded window can reattach ({@link collectOrReattach}). The container is removed on every path.
 *
 * The time limit counts from the moment the script starts: building the clean tree and copying it
 * in do not count (they have their own limit, {@link setupLimitMs}).
 *
 * Temp files (the clean tree, its indexes) are named with the process id; those of processes that
 * are gone (a killed verifier) are removed at the next run, as are verify containers whose owner
 * is gone and whose result was collected ({@link keepVerifyContainer}).
 *
 * @returns the final record (a failing or timed-out script is a result, not an error)
 * @throws ExpBenchError SESSION_INVALID (no workspace, or a run still in progress), DOCKER_UNAVAILABLE,
 *   IMAGE_MISSING, BAD_INPUT (bad limits: a time limit outside 1 ms … {@link MAX_TIMEOUT_MS}, a log
 *   cap below {@link MIN_LOG_CAP_BYTES}), CANCELLED (record saved), CONTAINER_FAILED (also: the
 *   disk filled up; any other failure, never a bare Error)
 */
export async function runVerification(sessionDir: string, opts: VerifyOptions = {}): Promise<VerificationRecord> {
  try {
    return await verifyOnce(sessionDir, opts);
  } catch (e) {
    throw asVerifyError(e, path.resolve(sessionDir));
  }
}

async function verifyOnce(sessionDir: string, opts: VerifyOptions): Promise<VerificationRecord> {
  const layout = new SessionLayout(path.resolve(sessionDir));
  const mode = opts.mode ?? 'clean';
  const status = opts.onStatus ?? (() => undefined);
  if (!(await exists(layout.workspace))) {
    throw new ExpBenchError('SESSION_INVALID', layout.root, 'not a session folder: it has no workspace/ folder');
  }
  await assertPreparationFinished(layout.root, 'verify');
  const limits: VerifyLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  checkLimits(limits, opts.logCapBytes);
  const docker = opts.docker ?? connectDocker();
  const manifest = (await readJsonIfExists<{ taskId?: unknown; image?: unknown; environment?: { mounts?: unknown; setup?: unknown } }>(layout.manifest).catch(() => undefined)) ?? {};
  // The environment's setup commands (docs/curation.md), run by the wrapper before the script.
  const setup = Array.isArray(manifest.environment?.setup) ? (manifest.environment.setup as unknown[]).filter((c): c is string => typeof c === 'string' && c.trim() !== '') : [];
  const taskId = typeof manifest.taskId === 'string' ? manifest.taskId : 'unknown';
  // The environment's read-only data mounts (docs/curation.md): a missing host path is refused here, before any container.
  const mounts = Array.isArray(manifest.environment?.mounts)
    ? (manifest.environment.mounts as unknown[]).filter((m): m is DataMount => typeof (m as DataMount)?.host === 'string' && typeof (m as DataMount)?.container === 'string')
    : [];
  const mountBinds = await dataMountBinds(mounts);
  const image = opts.image ?? (typeof manifest.image === 'string' ? manifest.image : DEFAULT_IMAGE);
  const runId = newRunId();
  const paths = new VerifyRunPaths(layout, runId);
  let tree: string | undefined;
  let containerId: string | undefined;
  // The wrapper's output folder (changed.tar), writable by whichever uid the run uses.
  const outDir = paths.out;
  let watching = false;
  await fsp.mkdir(outDir, { recursive: true });
  await fsp.chmod(outDir, 0o777);
  // The clean tree is built from the start, while the engine side runs; the container does not
  // wait for it: it starts as soon as it exists and its wrapper waits for the tree on stdin.
  // Past its first check, the tree is built once the container's start is under way (see
  // buildVerifyTree's `proceed`); any path that does not get there stops it.
  let release!: (go: boolean) => void;
  const proceed = new Promise<void>((resolve, reject) => {
    release = (go) => (go ? resolve() : reject(cancelled(`verification ${runId} (not started)`)));
  });
  proceed.catch(() => undefined);
  // What is verified: the frozen submission of a submitted session, else the work tree now.
  const inputP = verifyInput(layout, opts.signal);
  inputP.catch(() => undefined);
  // Clean mode: the tree is built while the container starts. Harness mode: a submitted session's
  // frozen tree is checked out first and mounted; an unsubmitted one's live workspace is mounted,
  // as the reference harness mounts its workspace.
  let treeJob: ReturnType<typeof startTree> | undefined = mode === 'clean'
    ? startTree(layout.workspace, { signal: opts.signal, proceed, input: inputP }, status, (dir) => { tree = dir; })
    : undefined;
  let mounted: string | undefined;
  try {
    if (mode === 'harness') {
      if ((await inputP).record.from === 'frozen') {
        treeJob = startTree(layout.workspace, { signal: opts.signal, proceed: Promise.resolve(), input: inputP }, status, (dir) => { tree = dir; });
        mounted = await treeJob.built;
      } else {
        mounted = layout.workspace;
      }
    }
    const user = mode === 'clean' ? 'solver' : await ownerOf(mounted!);
    // The engine's side: check the engine, settle the previous run, then create the container
    // while the image is inspected and orphans are swept. Also: the script as the solver left it,
    // linted for the `running` record (the final record lints the clean tree's copy).
    const [engineSide, workspaceScript] = await allSettledOrThrow([
      (async () => {
        await ensureEngine(docker);
        await settlePrevious(layout, docker, opts.onNotice ?? status);
        const [imageInfo, created] = await allSettledOrThrow([
          inspectImage(docker, image).then((info) => {
            if (!info) throw new ExpBenchError('IMAGE_MISSING', image, 'the Docker image is not present; build it with: sudo bash sandbox/build-offline.sh');
            return info;
          }),
          (async () => {
            status(`creating the verify container (${image})`);
            const c = await createContainer(docker, {
              image,
              labels: { task: taskId, session: path.basename(layout.root), role: 'verify' },
              binds: [
                ...(mode === 'harness' ? [{ hostPath: mounted!, containerPath: '/workspace' }] : []),
                { hostPath: outDir, containerPath: WRAPPER_DIR },
                ...mountBinds,
              ],
              limits: {
                network: limits.network, gpus: limits.gpus,
                ...(limits.memoryBytes > 0 ? { memoryBytes: limits.memoryBytes } : {}),
                ...(limits.cpus > 0 ? { cpus: limits.cpus } : {}),
                ...(limits.pids > 0 ? { pids: limits.pids } : {}),
              },
              cmd: wrapperCommand(limits.timeoutMs / 1000 + 30, mode === 'clean' ? treeMarkerName(runId) : undefined),
              openStdin: mode === 'clean',
              user,
              workdir: '/workspace',
              env: { HOME: mode === 'clean' ? '/home/solver' : '/tmp', PYTHONUNBUFFERED: '1', MPLBACKEND: 'Agg', ...(setup.length ? { EXPBENCH_SETUP: setup.join('\n') } : {}) },
              start: false,
              extraLabels: { [LABEL_OWNER]: ownerToken() },
            });
            containerId = c.id;
            return c;
          })(),
          removeOrphans(docker, (_session, info) => keepVerifyContainer(docker, info)),
          sweepDeadOwners(os.tmpdir(), VERIFY_TEMP),
        ] as const);
        return { imageInfo, created };
      })(),
      // The frozen submission's script from its tree; an unsubmitted session's from the workspace,
      // never blocking on a FIFO, never following a link out of it (the run is refused then, saying why).
      inputP.then((i) => i.record.from === 'frozen'
        ? i.script
        : readUntrustedText(path.join(layout.workspace, 'reproduce_exp_bench.sh'), { within: layout.workspace, links: 'inside', maxBytes: LIMITS.workspaceFileBytes, what: 'reproduce_exp_bench.sh' })),
      // A session without a host repository (and its task start) fails here, before any start.
      treeJob?.checked ?? Promise.resolve(),
    ] as const);
    const input = await inputP;
    const { imageInfo, created } = engineSide;
    if (opts.signal?.aborted) throw cancelled(layout.root);
    const logs = new RunLogs(paths, opts.logCapBytes ?? DEFAULT_LOG_CAP_BYTES, opts.onLine);
    const record: VerificationRecord = {
      version: 1, runId, status: 'running', mode, imageId: imageInfo.id, image, containerId: created.id, owner: ownerToken(),
      command: VERIFY_COMMAND, user, gpusPassed: created.gpus, limits, startedAt: new Date().toISOString(),
      exitCode: null, timedOut: false, cancelled: false, logs: paths.relativeLogs(), logTruncated: false,
      logCapBytes: opts.logCapBytes ?? DEFAULT_LOG_CAP_BYTES, E_exit: false, E_clean: mode === 'clean' ? false : null,
      E_claims: { claims: [], allFound: false, note: 'the run has not finished' }, changedFiles: [], lint: lintScript(workspaceScript),
      input: input.record,
      ...(mounts.length ? { mounts: mounts.map((m) => ({ host: m.host, container: m.container })) } : {}),
      ...(setup.length ? { setup: { commands: setup, failed: false } } : {}),
    };
    // In parallel: the output (and, in clean mode, the input the tree goes through) is attached,
    // the `running` record is saved.
    let attached: NodeJS.ReadWriteStream | undefined;
    const [stream] = await allSettledOrThrow([
      created.container.attach({ stream: true, stdout: true, stderr: true, ...(mode === 'clean' ? { stdin: true, hijack: true } : {}) })
        .then((s) => { attached = s; return s; })
        .catch((e: unknown) => { throw dockerError(e, created.id.slice(0, 12), 'attaching to the verify container', docker); }),
      logs.open().then(() => saveRecord(layout, record)).catch((e: unknown) => { throw asVerifyError(e, layout.root); }),
    ] as const).catch(async (e: unknown) => {
      // The `running` record may be saved already: replace it with the error. An attached stream
      // is ended (an open hijacked socket would keep the process alive).
      (attached as unknown as { destroy?: () => void } | undefined)?.destroy?.();
      const err = dockerError(e, created.id.slice(0, 12), 'preparing the verify container', docker);
      await logs.close().catch(() => undefined);
      await saveRecord(layout, { ...record, status: 'error', endedAt: new Date().toISOString(), error: { code: err.code, message: err.message } }).catch(() => undefined);
      throw err;
    });
    const drained = pipeLines(docker, stream, (l) => logs.add(l), false);
    record.startedAt = new Date().toISOString(); // the run's own time starts here (the saved one is a little earlier)
    opts.onStarted?.(record);
    status(`running bash reproduce_exp_bench.sh (${mode} mode, limit ${limits.timeoutMs / 1000} s)`);
    // Clean mode: the tree goes in through the container's stdin once built (no separate copy
    // round trip), from the moment the start is under way: the engine holds what arrives before
    // the wrapper reads it (as `docker run -i` does). The wrapper extracts it, then runs the
    // script. A tree that cannot be built or sent kills the container and makes the record an
    // error naming why; a cut stream makes the wrapper refuse to run (exit 125, said in the log).
    let treeFailure: ExpBenchError | undefined;
    // Set once the whole tree (its end marker last) went into the container's stdin: from then on a
    // `tree-incomplete` marker in the out folder, which the script can write too, is not believed.
    let treeSent = false;
    const feedWhenBuilt = (job: NonNullable<typeof treeJob>) => job.built
      .then(async (dir) => {
        tree = undefined; // removed here once sent, while the run goes on
        try {
          record.lint = lintScript(await readUntrustedText(path.join(dir, 'reproduce_exp_bench.sh'), { within: dir, links: 'inside', maxBytes: LIMITS.workspaceFileBytes, what: 'reproduce_exp_bench.sh' }).catch(() => undefined));
          status('copying the clean tree into the container');
          await feedTree(stream as unknown as NodeJS.WritableStream, dir, treeMarkerName(runId)).catch((e: unknown) => {
            throw new ExpBenchError('CONTAINER_FAILED', created.id.slice(0, 12), `the clean tree could not be sent into the verify container: ${errorMessage(e)}`, { cause: e });
          });
          treeSent = true;
        } finally {
          void removeTree(dir);
        }
      })
      .catch((e: unknown) => {
        if (isExpBenchError(e, 'CANCELLED')) return; // the watcher kills the run and records the cancel
        treeFailure = e instanceof ExpBenchError ? e : new ExpBenchError('CONTAINER_FAILED', created.id.slice(0, 12), String(e));
        logger.warn(`run ${runId}: ${treeFailure.message}`);
        created.container.kill().catch(() => undefined);
      });
    try {
      const starting = created.container.start();
      release(true);
      if (mode === 'clean') void feedWhenBuilt(treeJob!);
      await starting;
    } catch (e) {
      const err = dockerError(e, created.id.slice(0, 12), 'starting the verify container', docker);
      (stream as unknown as { destroy?: () => void }).destroy?.(); // ends a feed under way
      await logs.close();
      await saveRecord(layout, { ...record, status: 'error', endedAt: new Date().toISOString(), error: { code: err.code, message: err.message } });
      throw err;
    }
    logger.info(`run ${runId} started in ${created.id.slice(0, 12)} (${mode})`);
    containerId = undefined; // watchToEnd owns the container (and the output folder) from here
    watching = true;
    markWatched(created.id, true);
    try {
      return await watchToEnd({
        docker, layout, paths, record, container: created.container, logs, drained, signal: opts.signal, events: opts.events,
        startFailure: () => treeFailure,
        treeSent: () => treeSent,
      });
    } finally {
      markWatched(created.id, false);
    }
  } finally {
    release(false);
    await treeJob?.built.catch(() => undefined);
    if (tree) await removeTree(tree);
    if (containerId) await removeWithRetry(docker, containerId);
    if (!watching) await fsp.rm(outDir, { recursive: true, force: true });
  }
}

/**
 * Builds the clean tree in a new temporary folder (reported through `onDir` for the cleanup);
 * past its first check, only once `o.proceed` resolves.
 * `checked` settles once the session is known to have a host repository with its task start
 * (rejects with SESSION_INVALID otherwise); `built` with the folder once the tree is complete.
 * Both are observed (no unhandled rejection when nobody awaits one).
 */
function startTree(
  workspace: string, o: { signal?: AbortSignal; proceed: Promise<void>; input: Promise<{ record: VerifyInput }> }, status: (m: string) => void, onDir: (dir: string) => void,
): { checked: Promise<void>; built: Promise<string> } {
  let checkedOk!: () => void;
  let checkedFail!: (e: unknown) => void;
  const checked = new Promise<void>((resolve, reject) => { checkedOk = resolve; checkedFail = reject; });
  const built = (async () => {
    status('building the clean tree (task start + the solver\'s patch)');
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), `expbench-verify-tree-${process.pid}-`));
    onDir(dir);
    const { record } = await o.input;
    await buildVerifyTree(workspace, dir, { signal: o.signal, proceed: o.proceed, tree: record.tree, onChecked: checkedOk });
    return dir;
  })();
  built.catch((e: unknown) => checkedFail(e));
  checked.catch(() => undefined);
  return { checked, built };
}

/**
 * An exited verify container whose result was not collected (its record still says `running`), or
 * whose record cannot be read, is kept this long after it exited, ms (one day: `verify --collect`
 * recovers it until then), and swept afterwards.
 */
export const ORPHAN_MAX_AGE_MS = 24 * 3_600_000;
/** A created, never started verify container of an owner that cannot be checked (another host, no owner label) is kept this long, ms. */
export const ORPHAN_GRACE_CREATED_MS = 15 * 60_000;
/**
 * Temp entries of the verifier, named with the pid of the process that made them: the clean tree
 * and its indexes, and the temporary indexes of the work tree's snapshot it takes (workspace/snapshot.ts).
 */
const VERIFY_TEMP = /^expbench-(?:verify-(?:tree|index)|snapshot|frozen)-(\d+)-/;

/**
 * The orphan sweep's keep rule (true = keep). Only verify containers are swept (work containers
 * belong to their session's window); a running (or paused, restarting, being removed) one is kept:
 * another window or process may be watching it, and its own backstop ends it. Otherwise a verify
 * container is kept while its owner (label `expbench.owner`, the process that created it) still
 * runs and watches it. Of the others:
 * - never started (`created`): removed when its owner is gone (it can hold no result); kept
 *   {@link ORPHAN_GRACE_CREATED_MS} when the owner cannot be checked;
 * - exited: removed when its result was collected (its run's record is no longer `running`) or
 *   its session folder is gone; otherwise kept until {@link ORPHAN_MAX_AGE_MS} after it exited, so
 *   that the session's `verify --collect` can still collect it.
 */
export async function keepVerifyContainer(docker: Docker, info: Docker.ContainerInfo): Promise<boolean> {
  if (info.Labels?.[LABEL_ROLE] !== 'verify' || ['running', 'paused', 'restarting', 'removing'].includes(info.State)) return true;
  // This process's own containers are kept too: one may be being created right now, for a run
  // that starts after this sweep (one whose removal failed is swept once this process has ended).
  const gone = ownerGone(info.Labels?.[LABEL_OWNER]);
  if (gone === false) return true;
  if (info.State === 'created') return gone === true ? false : Date.now() - info.Created * 1000 < ORPHAN_GRACE_CREATED_MS;
  if ((await resultCollected(docker, info)) === true) return false;
  try {
    const finished = Date.parse((await docker.getContainer(info.Id).inspect()).State.FinishedAt);
    return !(Number.isFinite(finished) && finished > 0) || Date.now() - finished < ORPHAN_MAX_AGE_MS;
  } catch {
    return false; // gone meanwhile: nothing to keep
  }
}

/**
 * Whether a verify container's result was collected: read from its run's record, found through
 * the run's output folder that the container mounts (`<session>/private/verify/<runId>/out`).
 * `true` also when the session folder no longer exists (nobody can collect it); `undefined` when
 * it cannot be told (a remote engine, no such mount, a record that cannot be read).
 */
async function resultCollected(docker: Docker, info: Docker.ContainerInfo): Promise<boolean | undefined> {
  if (!isLocalEngine(docker)) return undefined;
  const out = info.Mounts?.find((m) => m.Destination === WRAPPER_DIR)?.Source;
  if (!out) return undefined;
  const runDir = path.dirname(out);
  const sessionRoot = path.dirname(path.dirname(path.dirname(runDir)));
  if (!(await exists(sessionRoot))) return true;
  try {
    const record = await readRecord(path.join(runDir, 'record.json'));
    if (!record) return undefined;
    return record.status !== 'running' || record.containerId !== info.Id;
  } catch {
    return undefined;
  }
}

/** Checks the limits of a run before anything is created. @throws ExpBenchError BAD_INPUT naming the limit */
function checkLimits(limits: VerifyLimits, logCapBytes: number | undefined): void {
  const t = limits.timeoutMs;
  if (!Number.isSafeInteger(t) || t < 1 || t > MAX_TIMEOUT_MS) {
    throw new ExpBenchError('BAD_INPUT', `time limit ${t / 1000} s`,
      `the time limit must be more than 0 and at most ${MAX_TIMEOUT_MS / 1000} s (about ${Math.floor(MAX_TIMEOUT_MS / 86_400_000)} days, the longest timer Node.js keeps)`);
  }
  if (logCapBytes !== undefined && (!Number.isSafeInteger(logCapBytes) || logCapBytes < MIN_LOG_CAP_BYTES)) {
    throw new ExpBenchError('BAD_INPUT', `log cap ${logCapBytes} bytes`, `the cap of each stored log must be a whole number of bytes ≥ ${MIN_LOG_CAP_BYTES}`);
  }
}

/**
 * Removes a clean tree folder; never throws. Through coreutils `rm -rf` where there is one (much
 * faster than Node's recursive rm for a tree of many files), else Node's.
 */
async function removeTree(dir: string): Promise<void> {
  try {
    await execFileP('rm', ['-rf', '--', dir]);
  } catch {
    await fsp.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * What a run verifies (see {@link VerifyInputSchema}) and the script it holds (for the `running`
 * record's lint): the frozen submission of a submitted session (with the paths the live
 * workspace changed since), else a snapshot of the work tree.
 * @throws ExpBenchError `SESSION_INVALID` when the session has no host repository
 */
async function verifyInput(layout: SessionLayout, signal?: AbortSignal): Promise<{ record: VerifyInput; script?: string }> {
  const h = await openHostRepository(layout, { signal });
  const frozen = await frozenSubmission(h, { signal });
  let record: VerifyInput;
  if (frozen) {
    const changed = await changedSince(h, frozen.tree, { signal });
    record = {
      from: 'frozen', commit: frozen.commit, tree: frozen.tree,
      changedAfterSubmit: changed.slice(0, MAX_CHANGED_AFTER_SUBMIT), changedAfterSubmitCount: changed.length,
      ...(frozen.from === 'patch' ? { note: 'made from the submitted patch.diff of an earlier version: binary files are not in it' } : {}),
    };
    if (changed.length) logger.warn(`${layout.root}: the workspace changed after Submit (${changed.length} path(s)); the frozen submission is verified`);
  } else {
    record = { from: 'workspace', tree: (await snapshotWorkTree(h, { signal })).tree };
  }
  const [obj] = (await catFileBatch(h.gitDir, [`${record.tree}:reproduce_exp_bench.sh`])) ?? [];
  return { record, ...(obj && 'data' in obj ? { script: obj.data.subarray(0, LIMITS.workspaceFileBytes).toString('utf8') } : {}) };
}

/** `uid:gid` of a folder (harness mode runs as the owner of the tree it mounts). */
async function ownerOf(dir: string): Promise<string> {
  const st = await fsp.stat(dir);
  return `${st.uid}:${st.gid}`;
}
