import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { errorMessage } from '../util/errors';

/** How to start an engine; shown in every DOCKER_UNAVAILABLE error. */
export const START_ENGINE_HINT =
  'start one with: sudo dockerd --iptables=false & (or: bash scripts/setup-docker.sh)';

/**
 * Where dockerode connects: `DOCKER_HOST` when set, otherwise the local Unix socket. With no
 * options, docker-modem's socketPath is a function that picks `~/.docker/run/docker.sock` when it
 * exists, else `/var/run/docker.sock`; the same choice is made here.
 */
export function engineAddress(docker?: Docker): string {
  const modem = (docker as unknown as { modem?: { socketPath?: unknown; host?: string; port?: number } } | undefined)?.modem;
  if (typeof modem?.socketPath === 'string' && modem.socketPath) return modem.socketPath;
  if (modem?.host) return `${modem.host}${modem.port ? `:${modem.port}` : ''}`;
  if (process.env.DOCKER_HOST) return process.env.DOCKER_HOST;
  const userSocket = path.join(os.homedir(), '.docker', 'run', 'docker.sock');
  return typeof modem?.socketPath === 'function' && fs.existsSync(userSocket) ? userSocket : '/var/run/docker.sock';
}

/** True when the engine is reached through a Unix socket or named pipe (so its bind-mount paths are this machine's). */
export function isLocalEngine(docker?: Docker): boolean {
  const address = engineAddress(docker);
  return address.startsWith('/') || address.startsWith('unix://') || address.startsWith('npipe:') || address.startsWith('\\\\.\\pipe')
    || /^(tcp:\/\/)?(localhost|127\.0\.0\.1)(:|$)/.test(address);
}

/**
 * A dockerode client for the local engine. With no options, dockerode reads `DOCKER_HOST`
 * (and `DOCKER_TLS_VERIFY`/`DOCKER_CERT_PATH`) or falls back to `/var/run/docker.sock`.
 * Connecting is lazy: nothing is sent until the first call; use {@link ensureEngine} to check.
 */
export function connectDocker(options?: Docker.DockerOptions): Docker {
  // Loaded on first use, not at import: evaluating dockerode (ssh2, grpc) takes ~1/3 of the
  // extension bundle's load time, paid by every activation (bench/activation.bench.ts).
  const DockerClient = require('dockerode') as typeof Docker;
  return new DockerClient(options);
}

/**
 * Checks that an engine answers (`GET /_ping`, one round trip: this runs before every verification
 * and work container, so the version is not asked for).
 * @param timeoutMs how long to wait for the ping, in ms (default 5000)
 * @throws ExpBenchError DOCKER_UNAVAILABLE naming the socket or host, with how to start an engine
 */
export async function ensureEngine(docker: Docker, timeoutMs = 5000): Promise<void> {
  const address = engineAddress(docker);
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    await Promise.race([docker.ping(), timeout]);
  } catch (e) {
    const why = errorMessage(e);
    throw new ExpBenchError('DOCKER_UNAVAILABLE', address,
      `no Docker engine answers (${why}); ${START_ENGINE_HINT}`, { cause: e });
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** True when `e` looks like a lost connection to the engine (socket gone, refused, reset). */
export function isEngineGone(e: unknown): boolean {
  const code = (e as { code?: string } | undefined)?.code;
  if (code && ['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', 'EACCES', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(code)) return true;
  const msg = errorMessage(e);
  return /connect (ECONNREFUSED|ENOENT)|socket hang up|ECONNRESET/.test(msg);
}

/** Status code of a dockerode HTTP error (404, 409, 500…), if any. */
export function statusOf(e: unknown): number | undefined {
  const s = (e as { statusCode?: number } | undefined)?.statusCode;
  return typeof s === 'number' ? s : undefined;
}

/**
 * Maps a dockerode error to an ExpBenchError: engine gone → DOCKER_UNAVAILABLE (naming the socket);
 * otherwise CONTAINER_FAILED naming `input` with the engine's own message.
 * ExpBenchErrors pass through unchanged.
 */
export function dockerError(e: unknown, input: string, what: string, docker?: Docker): ExpBenchError {
  if (e instanceof ExpBenchError) return e;
  const msg = engineMessage(e);
  if (isEngineGone(e)) {
    return new ExpBenchError('DOCKER_UNAVAILABLE', engineAddress(docker),
      `the Docker engine stopped answering while ${what} (${input}): ${msg}; ${START_ENGINE_HINT}`, { cause: e });
  }
  return new ExpBenchError('CONTAINER_FAILED', input, `${what} failed: ${msg}`, { cause: e });
}

/** The engine's own message from a dockerode error (`json.message`), else the error's message. */
export function engineMessage(e: unknown): string {
  const json = (e as { json?: { message?: string } } | undefined)?.json;
  if (json && typeof json.message === 'string') return json.message;
  return errorMessage(e);
}
