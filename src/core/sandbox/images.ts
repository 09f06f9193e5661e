import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import type Docker from 'dockerode';
import { ExpBenchError, cancelled } from '../errors';
import { log } from '../log';
import { dockerError, statusOf } from './connection';

const logger = log('sandbox');

/** The image every session uses unless a setting names another (built by sandbox/build-offline.sh). */
export const DEFAULT_IMAGE = 'expbench/sandbox:1';
/** Image label carrying the sandbox contract version (see sandbox/README.md). */
export const CONTRACT_LABEL = 'expbench.contract';
/** The contract version this code expects: python3, pip, git, bash, build tools, user solver (1000), /workspace. */
export const CONTRACT_VERSION = '1';

/** What the project needs to know about an image. */
export interface ImageInfo {
  /** Content id, `sha256:…`. */
  id: string;
  /** Value of the `expbench.contract` label, undefined when the image lacks it. */
  contract: string | undefined;
  /** Size in bytes as the engine reports it. */
  sizeBytes: number;
}

/**
 * Path of sandbox/build-offline.sh: the first `sandbox/build-offline.sh` found walking up from
 * `from` (this module's folder: src/core/sandbox, out/src/core/sandbox or dist/ all work).
 * @throws ExpBenchError IMAGE_MISSING when no such file is found
 */
export function offlineBuilderPath(from = __dirname): string {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'sandbox', 'build-offline.sh');
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) break;
  }
  throw new ExpBenchError('IMAGE_MISSING', DEFAULT_IMAGE, `sandbox/build-offline.sh not found above ${from}`);
}

/** The command a person runs to build the default image. */
export const BUILD_COMMAND = 'sudo bash sandbox/build-offline.sh';

/**
 * Inspects `image` (a tag or id).
 * @returns its id, contract label and size, or undefined when the engine has no such image
 * @throws ExpBenchError DOCKER_UNAVAILABLE when the engine does not answer
 */
export async function inspectImage(docker: Docker, image: string): Promise<ImageInfo | undefined> {
  try {
    const info = await docker.getImage(image).inspect();
    return { id: info.Id, contract: info.Config?.Labels?.[CONTRACT_LABEL], sizeBytes: info.Size };
  } catch (e) {
    if (statusOf(e) === 404) return undefined;
    throw dockerError(e, image, 'inspecting the image', docker);
  }
}

/**
 * Makes sure `image` exists and carries the contract label {@link CONTRACT_VERSION}.
 * @returns the image's info
 * @throws ExpBenchError IMAGE_MISSING naming the image and the command that builds it;
 *   BAD_INPUT when the image exists but has another (or no) contract label
 */
export async function ensureImage(docker: Docker, image = DEFAULT_IMAGE): Promise<ImageInfo> {
  const info = await inspectImage(docker, image);
  if (!info) {
    const how = image === DEFAULT_IMAGE
      ? `build it with: ${BUILD_COMMAND}`
      : `build it (same contract as sandbox/Dockerfile) or use ${DEFAULT_IMAGE} (${BUILD_COMMAND})`;
    throw new ExpBenchError('IMAGE_MISSING', image, `the Docker image is not present; ${how}`);
  }
  if (info.contract !== CONTRACT_VERSION) {
    throw new ExpBenchError('BAD_INPUT', image,
      `the image has ${CONTRACT_LABEL}=${info.contract ?? '(none)'}, expected ${CONTRACT_VERSION}; rebuild it from sandbox/ (${BUILD_COMMAND} --force)`);
  }
  return info;
}

/** Options of {@link buildOfflineImage}. */
export interface BuildOfflineOptions {
  /** Called with every output line of the builder (stdout and stderr), without the newline. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Aborting kills the builder (SIGTERM to its process group) and rejects with CANCELLED. */
  signal?: AbortSignal;
  /** Extra arguments, e.g. ['--force']. */
  args?: string[];
  /** Image tag to build (EXPBENCH_IMAGE); default {@link DEFAULT_IMAGE}. */
  image?: string;
  /** The builder script; default {@link offlineBuilderPath}(). */
  script?: string;
}

/**
 * Runs sandbox/build-offline.sh (debootstrap → docker import → contract layer), streaming lines.
 * Slow the first time (minutes); seconds when the image exists. Needs root and a running engine.
 * Resolves when the builder exits 0 (the image exists with the contract label).
 * @throws ExpBenchError CANCELLED when `signal` fires; IMAGE_MISSING with the last output lines
 *   when the builder fails
 */
export async function buildOfflineImage(opts: BuildOfflineOptions = {}): Promise<void> {
  const script = opts.script ?? offlineBuilderPath();
  const image = opts.image ?? DEFAULT_IMAGE;
  if (opts.signal?.aborted) throw cancelled(script);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script, ...(opts.args ?? [])], {
      cwd: path.dirname(path.dirname(script)),
      env: { ...process.env, EXPBENCH_IMAGE: image },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // own process group, so cancelling also stops debootstrap and docker build
    });
    const tail: string[] = [];
    const collect = (stream: 'stdout' | 'stderr') => (line: string) => {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      logger.debug(`build-offline: ${line}`);
      opts.onLine?.(line, stream);
    };
    readline.createInterface({ input: child.stdout }).on('line', collect('stdout'));
    readline.createInterface({ input: child.stderr }).on('line', collect('stderr'));
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      try { if (child.pid) process.kill(-child.pid, 'SIGTERM'); } catch { /* already gone */ }
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => {
      opts.signal?.removeEventListener('abort', onAbort);
      reject(new ExpBenchError('IMAGE_MISSING', image, `could not run ${script}: ${e.message}`, { cause: e }));
    });
    child.on('close', (code, sig) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (aborted) return reject(cancelled(script));
      if (code === 0) return resolve();
      reject(new ExpBenchError('IMAGE_MISSING', image,
        `${script} failed (${sig ? `signal ${sig}` : `exit code ${code}`}):\n${tail.join('\n')}`));
    });
  });
}
