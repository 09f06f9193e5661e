import * as fs from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { log } from '../log';
import { errorMessage } from '../util/errors';

const logger = log('sandbox');

/** Executables through which Docker's `--gpus` (DeviceRequests with capability `gpu`) works. */
const NVIDIA_HOOKS = ['nvidia-container-runtime-hook', 'nvidia-container-toolkit'];

function onPath(exe: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && fs.existsSync(path.join(dir, exe)));
}

/**
 * Whether the engine can pass GPUs to containers: it lists an `nvidia` runtime, or the NVIDIA
 * container hook that `docker run --gpus` needs is installed on this host (same check as Docker's
 * own daemon, which looks the hook up on its PATH). Never throws; false when unsure.
 */
export async function gpusAvailable(docker: Docker): Promise<boolean> {
  try {
    const info = (await docker.info()) as { Runtimes?: Record<string, unknown> };
    if (info.Runtimes && 'nvidia' in info.Runtimes) return true;
  } catch (e) {
    logger.debug(`docker info failed while looking for GPU support: ${errorMessage(e)}`);
    return false;
  }
  return NVIDIA_HOOKS.some(onPath);
}
