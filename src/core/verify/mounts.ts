import { promises as fsp } from 'node:fs';
import { ExpBenchError } from '../errors';
import type { Bind } from '../sandbox/containers';

/** A read-only data mount of a curation file's environment (`environment.mounts[i]`). */
export interface DataMount {
  /** Absolute host path (file or folder). */
  host: string;
  /** Absolute path in the container (never under /workspace: the curation schema refuses it). */
  container: string;
}

/**
 * The binds of an environment's data mounts, each read-only (docs/curation.md, "Curation file"),
 * checked before any container is made: the engine would create an empty folder for a host path
 * that does not exist, so such a mount is refused instead. Used by the verifier and by
 * `curate validate` alike.
 * @throws ExpBenchError `BAD_INPUT` naming `environment.mounts[i].host` and the path when a host
 *   path does not exist on this machine
 */
export async function dataMountBinds(mounts: readonly DataMount[]): Promise<Bind[]> {
  for (const [i, m] of mounts.entries()) {
    if (!(await fsp.stat(m.host).catch(() => undefined))) {
      throw new ExpBenchError('BAD_INPUT', `environment.mounts[${i}].host`, `the data mount ${m.host} (→ ${m.container}) does not exist on this machine; no container was made`);
    }
  }
  return mounts.map((m) => ({ hostPath: m.host, containerPath: m.container, readOnly: true }));
}
