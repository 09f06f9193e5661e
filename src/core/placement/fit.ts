import { plural } from '../util/plural';
import type { Amounts, Capacity, Resources } from './types';

const GIB = 1024;

/** `23.4 GiB` / `512 MiB`. */
export function formatMiB(mib: number): string {
  return mib >= GIB ? `${(mib / GIB).toFixed(mib % GIB === 0 ? 0 : 1)} GiB` : `${Math.round(mib)} MiB`;
}

/** `2 CPUs, 4 GiB, 1 GPU, 1 h`: a unit's resources in words. */
export function formatResources(r: Resources): string {
  const time = r.timeSeconds % 3600 === 0 ? `${r.timeSeconds / 3600} h` : r.timeSeconds % 60 === 0 ? `${r.timeSeconds / 60} min` : `${r.timeSeconds} s`;
  return `${plural(r.cpus, 'CPU')}, ${formatMiB(r.memoryMiB)}, ${plural(r.gpus, 'GPU')}, ${time}`;
}

/**
 * Why a unit can never run on `capacity` (more than one machine or node gives, or a longer time
 * than the partition allows), as the board shows it after `waiting: `: `needs 8 GPUs, 0 here`,
 * `needs 64 GiB memory, 23.4 GiB here`, `needs 48 h, at most 24 h here`. Undefined when it fits.
 */
export function unfit(r: Resources, capacity: Capacity): string | undefined {
  const c = capacity.perUnit;
  const why: string[] = [];
  if (r.gpus > c.gpus) why.push(`${plural(r.gpus, 'GPU')}, ${c.gpus} here`);
  if (r.cpus > c.cpus) why.push(`${plural(r.cpus, 'CPU')}, ${c.cpus} here`);
  if (r.memoryMiB > c.memoryMiB) why.push(`${formatMiB(r.memoryMiB)} memory, ${formatMiB(c.memoryMiB)} here`);
  if (capacity.maxTimeSeconds !== undefined && r.timeSeconds > capacity.maxTimeSeconds) {
    why.push(`${Math.ceil(r.timeSeconds / 60)} min, at most ${Math.floor(capacity.maxTimeSeconds / 60)} min here`);
  }
  return why.length ? `needs ${why.join('; ')}` : undefined;
}

/**
 * Why `r` does not fit in `free` now (resources busy, not impossible), e.g. `needs 2 CPUs, 1 free`;
 * undefined when it fits.
 */
export function busy(r: Amounts, free: Amounts): string | undefined {
  const why: string[] = [];
  if (r.gpus > free.gpus) why.push(`${plural(r.gpus, 'GPU')}, ${free.gpus} free`);
  if (r.cpus > free.cpus) why.push(`${plural(r.cpus, 'CPU')}, ${free.cpus} free`);
  if (r.memoryMiB > free.memoryMiB) why.push(`${formatMiB(r.memoryMiB)} memory, ${formatMiB(Math.max(0, free.memoryMiB))} free`);
  return why.length ? `needs ${why.join('; ')}` : undefined;
}

/** `a - b` per resource. */
export function minus(a: Amounts, b: Amounts): Amounts {
  return { cpus: a.cpus - b.cpus, memoryMiB: a.memoryMiB - b.memoryMiB, gpus: a.gpus - b.gpus };
}

/** `a + b` per resource. */
export function plus(a: Amounts, b: Amounts): Amounts {
  return { cpus: a.cpus + b.cpus, memoryMiB: a.memoryMiB + b.memoryMiB, gpus: a.gpus + b.gpus };
}

/**
 * The resource shape of a unit: units of one shape go into one Slurm job array (issue 28), e.g.
 * `c2-m4096-g0-t3600`.
 */
export function shapeOf(r: Resources): string {
  return `c${r.cpus}-m${r.memoryMiB}-g${r.gpus}-t${r.timeSeconds}`;
}
