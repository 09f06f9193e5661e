import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { z } from 'zod';
import { escapePointer } from '../tasks/design';
import type { Problem } from '../tasks/types';
import { errorMessage } from '../util/errors';

/**
 * The curation file of a paper (docs/curation.md, "Curation file"): `curation.jsonc` in the
 * paper's task folder, beside `<id>_complete_final.json` (the `.jsonc` name keeps it out of the
 * task loader, which reads `*.json`). JSON with comments and trailing commas. Version 1.
 */
export const CURATION_FILE = 'curation.jsonc';
export const CURATION_VERSION = 1;

const FULL_SHA = /^[0-9a-f]{40}$/;

export const CurationFileSchema = z.strictObject({
  /** Schema version; a reader refuses versions it does not know. */
  version: z.literal(CURATION_VERSION),
  /** `<conference>/<paperId>`, checked against the folder when given. */
  paper: z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'must be <conference>/<paperId>').optional(),
  /** The repository and commit the paper's tasks hold at. */
  repository: z.strictObject({
    /** A git URL, or a path (absolute, or relative to the curation file's folder) of a clone or folder. */
    url: z.string().min(1),
    /** Full SHA (40 hex digits) of the commit. */
    commit: z.string().regex(FULL_SHA, 'must be a full commit SHA (40 hex digits)'),
  }).optional(),
  /** What the tasks' experiments need to run. */
  environment: z.strictObject({
    /** Image the work and verify containers start from (default `expbench/sandbox:1`). */
    baseImage: z.string().min(1).optional(),
    /** Commands run once in the image, in order, at the repository root (`pip install -e .`). */
    setup: z.array(z.string().min(1)).optional(),
    /** A Dockerfile (relative to the curation file's folder) for machines with network. */
    dockerfile: z.string().min(1).optional(),
    /** Debian packages that serve offline (sandbox/build-offline.sh's list). */
    debianPackages: z.array(z.string().regex(/^[a-z0-9][a-z0-9+.-]+$/, 'must be a Debian package name')).optional(),
    /** Data folders mounted read-only into the containers. */
    mounts: z.array(z.strictObject({
      /** Absolute host path. */
      host: z.string().regex(/^\//, 'must be an absolute path'),
      /** Absolute path in the container (not under /workspace). */
      container: z.string().regex(/^\/(?!workspace(\/|$))/, 'must be an absolute path outside /workspace'),
    })).optional(),
    /** GPUs the experiment needs: 0 or absent for none. */
    gpus: z.number().int().nonnegative().max(64).optional(),
    /** Limits of one run. */
    limits: z.strictObject({
      /** Wall-clock seconds. */
      timeSeconds: z.number().int().positive().optional(),
      /** Memory, MiB. */
      memoryMiB: z.number().int().positive().optional(),
      /** CPUs (whole cores) a run needs: a run set places the unit where they are free (docs/runs.md). */
      cpus: z.number().int().positive().max(1024).optional(),
    }).optional(),
  }).optional(),
  /** Free text for the next curator. */
  notes: z.string().optional(),
});
export type CurationFile = z.infer<typeof CurationFileSchema>;

/** A curation file read: its content when valid, and every problem (file + JSON pointer). */
export interface CurationRead {
  file: string;
  curation?: CurationFile;
  problems: Problem[];
}

/** The curation file beside a task file (it may not exist). */
export function curationFileFor(taskFile: string): string {
  return path.join(path.dirname(taskFile), CURATION_FILE);
}

/**
 * Reads and checks a curation file. `undefined` when it does not exist. Never throws on bad
 * content: a syntax error, an unknown version, a wrong field, or a `paper` that does not match
 * `expectedPaper` is a problem (pointer into the file, RFC 6901) and `curation` is absent.
 * A `repository.url` that is not a URL is a path, returned absolute (resolved from the file's folder).
 */
export async function readCurationFile(file: string, expectedPaper?: string): Promise<CurationRead | undefined> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { file, problems: [{ file, pointer: '', severity: 'error', message: `cannot read: ${errorMessage(e)}` }] };
  }
  const errors: ParseError[] = [];
  const json: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0];
    const line = text.slice(0, e.offset).split('\n').length;
    return { file, problems: [{ file, pointer: '', severity: 'error', message: `not JSON (with comments): ${printParseErrorCode(e.error)} at line ${line}` }] };
  }
  const r = CurationFileSchema.safeParse(json);
  if (!r.success) {
    return {
      file,
      problems: r.error.issues.map((i) => ({
        file, severity: 'error' as const,
        pointer: i.path.map((k) => '/' + escapePointer(String(k))).join(''),
        message: i.path.length === 0 ? `curation file: ${i.message}` : `"${i.path.join('.')}": ${i.message}`,
      })),
    };
  }
  const curation = r.data;
  if (expectedPaper !== undefined && curation.paper !== undefined && curation.paper !== expectedPaper) {
    return { file, problems: [{ file, pointer: '/paper', severity: 'error', message: `names paper ${curation.paper}, but lies in the folder of ${expectedPaper}` }] };
  }
  if (curation.repository && !/^[a-z][a-z0-9+.-]*:\/\//i.test(curation.repository.url) && !/^[^/\s@]+@[^/\s:]+:/.test(curation.repository.url)) {
    curation.repository = { ...curation.repository, url: path.resolve(path.dirname(file), curation.repository.url) };
  }
  return { file, curation, problems: [] };
}
