import * as fs from 'node:fs';
import { Transform } from 'node:stream';
import type Docker from 'dockerode';
import * as tarFs from 'tar-fs';
import { ExpBenchError } from '../errors';
import { dockerError, engineMessage, statusOf } from './connection';

import { SOLVER_GID, SOLVER_UID } from '../layout';

/** uid/gid of the image contract's `solver` user (sandbox/README.md); defined in layout/. */
export { SOLVER_GID, SOLVER_UID };

/** Options of {@link copyIn}. */
export interface CopyInOptions {
  /** Directory inside the container to extract into; it must exist (default `/workspace`). */
  dest?: string;
  /** For a directory source: skip entries whose path (relative to the directory) this returns true for. */
  ignore?: (relativePath: string) => boolean;
  /** For a directory source: owner of the copied files in the container (default solver, 1000:1000). */
  owner?: { uid: number; gid: number };
}

/**
 * Copies files into a container (created or running) through the engine's archive API
 * (`PUT /containers/{id}/archive`), never a bind mount: the verifier's clean copy.
 * @param source a host directory (packed with tar-fs, entries owned by `owner`, symlinks kept as
 *   links) or a ready tar stream (used as is)
 * @returns bytes sent for a directory source (tar size), undefined for a stream
 * @throws ExpBenchError BAD_INPUT naming the directory when it does not exist; CONTAINER_FAILED when
 *   the engine refuses (for example `dest` missing); DOCKER_UNAVAILABLE when the engine is gone
 */
export async function copyIn(container: Docker.Container, source: string | NodeJS.ReadableStream, opts: CopyInOptions = {}): Promise<number | undefined> {
  const dest = opts.dest ?? '/workspace';
  let tar: NodeJS.ReadableStream;
  let bytes: number | undefined;
  if (typeof source === 'string') {
    const st = await fs.promises.stat(source).catch(() => undefined);
    if (!st?.isDirectory()) throw new ExpBenchError('BAD_INPUT', source, 'not a directory; cannot copy it into the container');
    const owner = opts.owner ?? { uid: SOLVER_UID, gid: SOLVER_GID };
    const pack = tarFs.pack(source, {
      ignore: opts.ignore ? (name: string) => opts.ignore!(relative(source, name)) : undefined,
      map: (h) => ({ ...h, uid: owner.uid, gid: owner.gid, uname: '', gname: '' }),
    });
    let n = 0;
    const counter = new Transform({ transform(chunk: Buffer, _enc, cb) { n += chunk.length; cb(null, chunk); } });
    counter.on('end', () => { bytes = n; });
    pack.on('error', (e) => counter.destroy(e));
    tar = pack.pipe(counter);
  } else tar = source;
  try {
    await container.putArchive(tar, { path: dest });
  } catch (e) {
    const label = container.id.slice(0, 12);
    if (statusOf(e) === 404 || statusOf(e) === 400) {
      throw new ExpBenchError('CONTAINER_FAILED', `${label}:${dest}`, `copying files into the container failed: ${engineMessage(e)}`, { cause: e });
    }
    throw dockerError(e, `${label}:${dest}`, 'copying files into the container');
  }
  return bytes;
}

function relative(root: string, name: string): string {
  const r = name.startsWith(root) ? name.slice(root.length) : name;
  return r.replace(/^[/\\]+/, '');
}
