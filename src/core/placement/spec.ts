import { z } from 'zod';
import type Docker from 'dockerode';
import { LocalPlacement } from './local';
import { SlurmPlacement } from './slurm/placement';
import { SlurmPlacementSpec } from './slurm/spec';
import type { Placement } from './types';

/** `"placement": {"kind": "local"}`: this machine (src/core/placement/local.ts). */
export const LocalPlacementSpec = z.strictObject({ kind: z.literal('local') });

/**
 * The `placement` of a run-set spec (docs/runs.md, docs/placement.md): one member per kind,
 * told apart by `kind`: `local` (this machine), `slurm` (src/core/placement/slurm/spec.ts).
 */
export const PlacementSpecSchema = z.discriminatedUnion('kind', [LocalPlacementSpec, SlurmPlacementSpec]);
export type PlacementSpec = z.infer<typeof PlacementSpecSchema>;

/** What a placement may need from its host process. */
export interface PlacementContext {
  docker?: Docker;
}

/** The placement a spec names. */
export function createPlacement(spec: PlacementSpec, ctx: PlacementContext = {}): Placement {
  switch (spec.kind) {
    case 'local': return new LocalPlacement({ docker: ctx.docker });
    case 'slurm': return new SlurmPlacement({ spec, docker: ctx.docker });
  }
}
