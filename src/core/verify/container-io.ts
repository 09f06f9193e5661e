import * as path from 'node:path';
import { Readable, Writable } from 'node:stream';
import type Docker from 'dockerode';
import * as tarFs from 'tar-fs';
import * as tarStream from 'tar-stream';
import { ExpBenchError, errorMessage } from '../errors';
import { LIMITS, readUntrusted } from '../untrusted';
import { streamLines } from '../util/jsonl';
import type { OutputSource } from './claims';
import { LineSplitter, LogLine } from './logs';

/** uid/gid of the image contract's non-root user `solver` (sandbox/README.md, contract v1). */
export const SOLVER_UID = 1000;

/**
 * Where the in-container wrapper keeps its marker and the archive of changed files: the run's
 * output folder on the host (`private/verify/<runId>/out`), bind-mounted (never the workspace), so
 * the archive is read from the host without another round trip to the engine.
 */
export const WRAPPER_DIR = '/tmp/.expbench';
/** Text files the run created or changed, larger than this (bytes) are not searched for claims. */
export const MAX_CHANGED_FILE_BYTES = 1024 * 1024;
/** At most this many changed files are copied out and searched. */
export const MAX_CHANGED_FILES = 500;

/**
 * The container's main command: runs `bash reproduce_exp_bench.sh` in /workspace and exits with
 * its exit code. Around it, a wrapper (1) touches a marker before the script starts, runs the
 * environment's setup commands from the env variable `EXPBENCH_SETUP` first when there are any
 * (one `bash -e` script; it counts against the script's time limit; on a non-zero exit it writes
 * {@link SETUP_FAILED} and exits with that code without running the script), (2) bounds the
 * script with coreutils `timeout` at `backstopSeconds` (a backstop so that a run nobody watches
 * any more, e.g. after a crash, still ends; the verifier's own timer fires first), and (3) after the
 * script exits, archives the regular files under /workspace newer than the setup's end (up to
 * {@link MAX_CHANGED_FILES}, each < 1 MiB, `.git` excluded) to `/tmp/.expbench/changed.tar`,
 * which the verifier reads from the run's output folder for the claims check. The wrapper prints
 * nothing itself, except when the clean tree arrives cut: then it writes {@link TREE_INCOMPLETE}
 * into its folder, says so on stderr and exits 125 without running the script. The marker
 * `start` (its modification time) is when the script started: the time limit counts from it;
 * `end`, when it ended (archiving the changed files afterwards does not count).
 */
/**
 * Shell lines that touch `marker`, then wait until a file touched now is newer than it (at most
 * 1,000 touches; in practice one tick of the kernel's file clock, a few ms), so that
 * `find -newer marker` lists every file written afterwards. File times come from a coarse clock
 * (one jiffy), and a file written in the marker's own tick has the marker's time, which is not
 * "newer": measured here, 129 of 200 files written right after the marker were missed.
 */
export function touchMarker(marker: string): string {
  return `touch ${marker} && for _ in $(seq 1 1000); do touch ${marker}.tick; [ ${marker}.tick -nt ${marker} ] && break; done; rm -f ${marker}.tick`;
}

export function wrapperCommand(backstopSeconds: number, treeMarker?: string): string[] {
  const s = Math.max(1, Math.ceil(backstopSeconds));
  const script = [
    ...(treeMarker ? [
      // The clean tree arrives on stdin ({@link feedTree}); its last entry is the marker, so a cut
      // stream (the verifier gone mid-copy) is refused instead of running on a partial tree.
      `tar -xf - -C /workspace && rm /workspace/${treeMarker} || { touch ${WRAPPER_DIR}/${TREE_INCOMPLETE}; echo 'expbench: the clean tree did not arrive complete; the script was not run' >&2; exit 125; }`,
      'exec </dev/null',
    ] : []),
    `mkdir -p ${WRAPPER_DIR} && touch ${WRAPPER_DIR}/start`,
    // The environment's setup commands (curation file, recorded in the manifest), as one `bash -e`
    // script in /workspace; on failure the script is not run.
    'if [ -n "$EXPBENCH_SETUP" ]; then',
    `  timeout -k 5 ${s} bash -ec "$EXPBENCH_SETUP" </dev/null; code=$?`,
    `  if [ $code -ne 0 ]; then touch ${WRAPPER_DIR}/${SETUP_FAILED} ${WRAPPER_DIR}/${SCRIPT_ENDED}; echo "expbench: the environment's setup failed (exit $code); reproduce_exp_bench.sh was not run" >&2; exit $code; fi`,
    'fi',
    touchMarker(`${WRAPPER_DIR}/${SETUP_DONE}`),
    `timeout -k 5 ${s} bash reproduce_exp_bench.sh`,
    'code=$?',
    `touch ${WRAPPER_DIR}/${SCRIPT_ENDED}`,
    `{ find /workspace -xdev -type f -newer ${WRAPPER_DIR}/${SETUP_DONE} -size -${MAX_CHANGED_FILE_BYTES / 1024 + 1}k -not -path '*/.git/*' -print0`
      + ` | head -z -n ${MAX_CHANGED_FILES} | tar --null -T - -cf ${WRAPPER_DIR}/changed.tar; } </dev/null >/dev/null 2>&1`,
    'exit $code',
  ].join('\n');
  return ['bash', '-c', script];
}

/** Marker the wrapper writes into {@link WRAPPER_DIR} when the environment's setup exited non-zero (the script did not run). */
export const SETUP_FAILED = 'setup-failed';
/** Marker the wrapper touches after the setup (or right after `start` without one): files newer than it are the script's. */
export const SETUP_DONE = 'setup-done';
/** Marker the wrapper writes into {@link WRAPPER_DIR} when the clean tree arrived cut (the script did not run). */
export const TREE_INCOMPLETE = 'tree-incomplete';
/** Marker the wrapper touches in {@link WRAPPER_DIR} right before the script starts. */
export const SCRIPT_STARTED = 'start';
/** Marker the wrapper touches in {@link WRAPPER_DIR} right after the script ends (before the changed files are archived). */
export const SCRIPT_ENDED = 'end';

/** The archive of the changed files the wrapper writes into {@link WRAPPER_DIR}. */
export const CHANGED_ARCHIVE = 'changed.tar';

/** Name of the marker entry that ends the tree's tar stream (see {@link wrapperCommand}). */
export function treeMarkerName(runId: string): string {
  return `.expbench-tree-complete-${runId.replace(/[^A-Za-z0-9_-]/g, '')}`;
}

/**
 * Streams the folder `dir` as one tar (no bind mount) into the stdin of a container started with
 * {@link wrapperCommand}`(…, marker)`, which extracts it into /workspace as the solver user before
 * the script runs; the marker is the last entry. Ends the input side of `stdin` when done (the
 * attached stream stays readable for the output).
 * @param stdin the container's hijacked attach stream (`attach({ hijack: true, stdin: true, … })`)
 * @throws the tar or socket error when the stream could not be written completely
 */
export function feedTree(stdin: NodeJS.WritableStream, dir: string, marker: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const pack = tarFs.pack(dir, {
      map: (h) => ({ ...h, uid: SOLVER_UID, gid: SOLVER_UID, uname: 'solver', gname: 'solver' }),
      finalize: false,
      finish: (p) => { p.entry({ name: marker, mode: 0o600, uid: SOLVER_UID, gid: SOLVER_UID }, ''); p.finalize(); },
    });
    const fail = (e: unknown) => { pack.destroy(); reject(e); };
    pack.once('error', fail);
    (stdin as Writable).once('error', fail);
    pack.once('end', () => { stdin.end(); resolve(); });
    (pack as unknown as Readable).pipe(stdin, { end: false });
  });
}

/** Demultiplexes a Docker stdout/stderr stream (Tty off) into lines for `onLine`. */
export function pipeLines(docker: Docker, stream: NodeJS.ReadableStream, onLine: (l: LogLine) => void, timestamps: boolean): Promise<void> {
  const sink = (name: 'stdout' | 'stderr') => {
    const split = new LineSplitter((text) => {
      if (timestamps) {
        const m = dockerTimestamp(text);
        if (m) { onLine({ stream: name, time: m.time, text: m.text }); return; }
      }
      onLine({ stream: name, time: new Date().toISOString(), text });
    });
    const w = new Writable({ write(chunk: Buffer, _enc, cb) { split.write(chunk); cb(); } });
    return { w, split };
  };
  const out = sink('stdout');
  const err = sink('stderr');
  docker.modem.demuxStream(stream, out.w, err.w);
  return new Promise<void>((resolve) => {
    const done = () => { out.split.end(); err.split.end(); resolve(); };
    stream.once('end', done);
    stream.once('close', done);
    stream.once('error', done);
  });
}

/**
 * The container's output, each line prefixed with the engine's RFC 3339 time, as a stream.
 * @param since `<seconds>.<nanoseconds>` since the epoch (see {@link toDockerSince})
 */
export async function logsSince(container: Docker.Container, follow: boolean, since?: string): Promise<NodeJS.ReadableStream> {
  const opts = { stdout: true, stderr: true, timestamps: true, ...(since ? { since } : {}) };
  const res: unknown = follow ? await container.logs({ ...opts, follow: true }) : await container.logs({ ...opts, follow: false });
  return Buffer.isBuffer(res) ? Readable.from([res]) : (res as NodeJS.ReadableStream);
}

/**
 * Reads `changed.tar`, written by the wrapper into the run's output folder (bind-mounted at
 * {@link WRAPPER_DIR}): the text files the run created or changed. Binary files (a NUL byte in the
 * first 8 KiB) are skipped. No archive (the run was killed before the wrapper wrote it) gives an
 * empty list.
 *
 * The folder is the solver's to write (its script runs in the container as the wrapper's uid), so
 * the archive is read as untrusted input, once the container has exited (nothing in it writes any
 * more): a symbolic link is never followed (one to a host path would bring in a file written on
 * the host after Submit; one to a FIFO would block the verifier), a FIFO, socket, device or folder
 * is never opened, and more than {@link LIMITS}.changedArchiveBytes is refused before it is read.
 * What remains is bytes the container itself wrote, from the frozen tree.
 * @param outDir the host folder mounted at {@link WRAPPER_DIR} (see `VerifyRunPaths.out`)
 * @throws ExpBenchError `CONTAINER_FAILED` naming `<outDir>/changed.tar` when it is not a regular
 *   file in `outDir`, is over the limit, or cannot be read
 */
export async function collectChangedFiles(outDir: string): Promise<OutputSource[]> {
  const file = path.join(outDir, CHANGED_ARCHIVE);
  let archive: Buffer | undefined;
  try {
    archive = await readUntrusted(file, { within: outDir, maxBytes: LIMITS.changedArchiveBytes, what: 'the archive of the files the run changed' });
  } catch (e) {
    throw new ExpBenchError('CONTAINER_FAILED', file,
      `${withoutAdvice(e)}; the run's script put it there in place of the archive the wrapper writes, so the files the run changed were not taken`, { cause: e });
  }
  if (!archive) return [];
  const files: OutputSource[] = [];
  await eachEntry(Readable.from([archive]), (name, data) => {
    if (data.subarray(0, 8192).includes(0)) return;
    files.push({ source: name.replace(/^\/?workspace\//, ''), text: data.toString('utf8') });
  });
  return files;
}

/** The reader's sentence without its advice to the user (moving or shortening a file the verifier removes anyway). */
function withoutAdvice(e: unknown): string {
  let m = e instanceof ExpBenchError ? e.message.slice(e.input.length + 2) : errorMessage(e);
  for (const advice of [': move it away', ': shorten it']) {
    const i = m.indexOf(advice);
    if (i >= 0) m = m.slice(0, i);
  }
  return m;
}

function eachEntry(stream: NodeJS.ReadableStream, onFile: (name: string, data: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const extract = tarStream.extract();
    extract.on('entry', (header, body, next) => {
      const chunks: Buffer[] = [];
      body.on('data', (c: unknown) => { chunks.push(c as Buffer); });
      body.on('end', () => {
        if (header.type === 'file') onFile(header.name, Buffer.concat(chunks));
        next();
      });
      body.resume();
    });
    extract.on('finish', () => resolve());
    extract.on('error', reject);
    (stream as Readable).pipe(extract);
  });
}

/** Nanoseconds since the epoch of an ISO/RFC 3339 UTC time (`2026-11-29T08:46:14.123456789Z`). */
export function isoToNs(iso: string): bigint {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(iso);
  if (!m) return BigInt(Date.parse(iso)) * 1_000_000n;
  const frac = (m[2] ?? '').padEnd(9, '0').slice(0, 9);
  return BigInt(Date.parse(m[1] + 'Z')) * 1_000_000n + BigInt(frac);
}

/** Docker's `since` query value for an ISO time: `<seconds>.<nanoseconds>`. */
export function toDockerSince(iso: string): string {
  const ns = isoToNs(iso);
  return `${ns / 1_000_000_000n}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}`;
}

/**
 * Signals the engine sent to container `id` (its `kill` events: `docker stop`, `docker kill`, the
 * engine stopping its containers when it shuts down or restarts) between `sinceIso` and now,
 * as numbers or names as the engine reports them (`"15"`, `"SIGTERM"`).
 * @throws the engine's error (dockerode) when the events cannot be read
 */
export async function killSignalsSince(docker: Docker, id: string, sinceIso: string): Promise<string[]> {
  // String timestamps `<s>.<ns>`: `until` = now returns at once with the events so far.
  const stamp = (iso: string) => toDockerSince(iso) as unknown as number;
  const stream = await docker.getEvents({
    since: stamp(new Date(Date.parse(sinceIso) - 1000).toISOString()), until: stamp(new Date().toISOString()),
    filters: { container: [id], event: ['kill'] },
  });
  const signals: string[] = [];
  for await (const l of streamLines(stream as AsyncIterable<Buffer | string>)) {
    signals.push(String((JSON.parse(l.text) as { Actor?: { Attributes?: { signal?: string } } }).Actor?.Attributes?.signal ?? ''));
  }
  return signals;
}

/**
 * A Docker log line with its timestamp (`2026-01-02T03:04:05.123456789Z text`): the time (up to the
 * last `Z` of the first word) and the text after one space. What `/^(\d{4}-\d\d-\d\dT\S+Z) ?(.*)$/s`
 * read, in one pass.
 */
function dockerTimestamp(line: string): { time: string; text: string } | undefined {
  if (!/^\d{4}-\d\d-\d\dT/.test(line)) return undefined;
  let end = 11;
  while (end < line.length && !/\s/.test(line[end])) end++;
  const z = line.lastIndexOf('Z', end - 1);
  if (z < 12) return undefined;
  const rest = line.slice(z + 1);
  return { time: line.slice(0, z + 1), text: rest.startsWith(' ') ? rest.slice(1) : rest };
}
