import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { ExpBenchError } from '../errors';
import { fileError } from '../util/fs';
import { JsonLinesWriter, parseJsonLine, splitLines } from '../util/jsonl';

/** Version of the state records (docs/runs.md, "The state"). */
export const STATE_VERSION = 1;
/** Largest line read from a state file (a longer one is counted as invalid, never parsed). */
const MAX_LINE_BYTES = 4 * 1024 * 1024;

const Iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 timestamp');
const base = { v: z.literal(STATE_VERSION), at: Iso };
const rec = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) => z.object({ ...base, type: z.literal(type), ...shape });

export const ResourcesSchema = z.object({ cpus: z.number(), memoryMiB: z.number(), gpus: z.number(), timeSeconds: z.number() });
export const PlacementRefSchema = z.object({ kind: z.string(), unit: z.string(), id: z.string(), logFile: z.string(), submittedAt: z.string() });

/** The actor of a unit as planned (docs/runs.md "Units and their keys"). */
export const ActorSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('agent'), name: z.string(), model: z.string(), maxSteps: z.number().optional(), maxTokens: z.number().optional(),
    budgetUsd: z.number().optional(), maxMinutes: z.number().optional(), network: z.boolean().optional(), prices: z.string().optional(),
  }),
  z.object({
    kind: z.literal('import'), name: z.string(),
    /** The record's files (absolute), each with its SHA-256. */
    files: z.array(z.object({ path: z.string(), sha256: z.string() })),
    /** Which trajectory of the files (a multi-sample log), when not the task's own. */
    trajectoryId: z.string().optional(),
  }),
  /** Issue 32: a person's unit in a baseline campaign. */
  z.object({ kind: z.literal('human'), name: z.string(), baseliner: z.string() }),
]);
export type Actor = z.infer<typeof ActorSchema>;

/** A unit's outcome (docs/runs.md): E is `E_clean`; D, I, C, All, AllE under the policy `paper-likely`. */
export const OutcomeSchema = z.object({
  submitted: z.boolean(),
  /** Why the agent's run ended (src/core/agent/loop.ts `StopReason`), for agent units. */
  stop: z.string().optional(),
  E: z.boolean().nullable(), D: z.boolean().nullable(), I: z.boolean().nullable(), C: z.boolean().nullable(),
  All: z.boolean().nullable(), AllE: z.boolean().nullable(),
  tokens: z.number().optional(), costUsd: z.number().nullable().optional(), workingMs: z.number().optional(),
  verify: z.string().optional(), judge: z.string().optional(),
});
export type UnitOutcome = z.infer<typeof OutcomeSchema>;

export const RunSetRecordSchema = z.discriminatedUnion('type', [
  rec('runset.created', { id: z.string().regex(/^[\w.:-]{1,128}$/), name: z.string(), spec: z.record(z.string(), z.unknown()), specFile: z.string(), tool: z.string() }),
  rec('unit.planned', {
    unit: z.string().regex(/^[0-9a-f]{64}$/, 'a unit key is 64 hex digits'), name: z.string().regex(/^[\w.+-]{1,200}$/, 'a unit name is a folder name'), task: z.string(), attempt: z.number().int().positive(), actor: ActorSchema, resources: ResourcesSchema,
    keyParts: z.object({ task: z.string(), actor: z.string(), image: z.string(), pin: z.string() }),
    dir: z.string().regex(/^units\/[\w.+-]{1,200}$/, 'a unit folder is units/<name>'), source: z.string(), commit: z.string().nullable(), image: z.string(),
  }),
  rec('orchestrator.started', { owner: z.string(), command: z.string(), placement: z.string(), capacity: z.string() }),
  rec('orchestrator.reaped', { stopped: z.array(z.object({ unit: z.string(), id: z.string(), how: z.string() })), containers: z.array(z.string()) }),
  rec('unit.waiting', { unit: z.string(), reason: z.string() }),
  rec('unit.placed', { unit: z.string(), try: z.number().int().positive(), ref: PlacementRefSchema }),
  rec('unit.pending', { unit: z.string(), try: z.number().int().positive(), reason: z.string() }),
  rec('unit.started', { unit: z.string(), try: z.number().int().positive(), ref: PlacementRefSchema, host: z.string().optional() }),
  rec('unit.progress', {
    unit: z.string(), phase: z.string().optional(), steps: z.number().optional(), tokens: z.number().optional(),
    costUsd: z.number().nullable().optional(), workingMs: z.number().optional(),
  }),
  rec('unit.retry', { unit: z.string(), try: z.number().int().positive(), reason: z.string(), after: Iso }),
  rec('unit.requeued', { unit: z.string(), try: z.number().int().positive(), end: z.string(), reason: z.string().optional() }),
  rec('unit.finished', {
    unit: z.string(), try: z.number().int().nonnegative(), status: z.enum(['done', 'failed']), message: z.string(),
    outcome: OutcomeSchema.optional(), log: z.string().optional(), rebuilt: z.boolean().optional(),
  }),
  rec('unit.cancelled', { unit: z.string(), try: z.number().int().nonnegative().optional() }),
  rec('runset.cancelled', { by: z.string() }),
  rec('orchestrator.finished', { counts: z.record(z.string(), z.number()), report: z.string().optional(), exitCode: z.number().optional() }),
]);
export type RunSetRecord = z.infer<typeof RunSetRecordSchema>;
/** A record as given to {@link RunSetLog.append} (the log stamps `v` and `at`). */
export type NewRecord = RunSetRecord extends infer R ? R extends RunSetRecord ? Omit<R, 'v' | 'at'> : never : never;

/** A line that could not be read: its 1-based number, why, and the start of its text. */
export interface InvalidLine { line: number; error: string; text: string }

/** What {@link readRunSet} read. */
export interface ReadResult {
  records: RunSetRecord[];
  invalid: InvalidLine[];
  /** Bytes read up to the end of the last whole line (where a follower goes on). */
  offset: number;
  /** The 1-based number of the next line. */
  nextLine: number;
}

/**
 * Reads a state file from `fromOffset` (default the start): every whole line parsed and checked
 * against {@link RunSetRecordSchema}; a line that fails is in `invalid` (never thrown: a torn
 * last line of a killed writer is expected). A last line without its newline is left for the next
 * read (`offset` stops before it). Undefined when the file does not exist.
 * @throws ExpBenchError BAD_INPUT when the path is not a regular file or cannot be read
 */
export async function readRunSet(file: string, fromOffset = 0, firstLine = 1): Promise<ReadResult | undefined> {
  let fh: FileHandle;
  try {
    fh = await fsp.open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError(file, 'read', e);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new ExpBenchError('BAD_INPUT', file, 'the run set\'s state is not a regular file');
    const length = Math.max(0, st.size - fromOffset);
    const buf = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const { bytesRead } = await fh.read(buf, got, length - got, fromOffset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return parseLines(buf.subarray(0, got), fromOffset, firstLine);
  } finally {
    await fh.close();
  }
}

/**
 * The run set's name from the first line of its state file (its `runset.created` record), read
 * synchronously and bounded to {@link MAX_LINE_BYTES}: for a title wanted before any async read
 * (a webview panel's title is best given when it is created). Undefined when the file is missing,
 * not a regular file, or its first line is not a whole, valid `runset.created` record; never throws.
 */
export function readRunSetName(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    if (!fs.fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(MAX_LINE_BYTES);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const end = buf.subarray(0, n).indexOf(0x0a);
    if (end < 0) return undefined;
    const r = RunSetRecordSchema.safeParse(JSON.parse(buf.subarray(0, end).toString('utf8')));
    return r.success && r.data.type === 'runset.created' ? r.data.name : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function parseLines(buf: Buffer, fromOffset: number, firstLine: number): ReadResult {
  const records: RunSetRecord[] = [];
  const invalid: InvalidLine[] = [];
  let offset = fromOffset;
  let nextLine = firstLine;
  for (const l of splitLines(buf, { offset: fromOffset, line: firstLine - 1 })) {
    if (l.kind === 'torn') break; // a writer's line not ended yet: read it next time
    offset = l.offset + Buffer.byteLength(l.text, 'utf8') + 1;
    nextLine = l.line + 1;
    if (!l.text.trim()) continue;
    if (l.text.length > MAX_LINE_BYTES) { invalid.push({ line: l.line, error: `longer than ${MAX_LINE_BYTES} bytes`, text: l.text.slice(0, 80) }); continue; }
    const j = parseJsonLine(l);
    if (j.kind !== 'value') { invalid.push({ line: l.line, error: j.kind === 'invalid' ? `not JSON: ${j.error}` : 'torn', text: l.text.slice(0, 80) }); continue; }
    const r = RunSetRecordSchema.safeParse(j.value);
    if (r.success) records.push(r.data);
    else invalid.push({ line: l.line, error: r.error.issues.slice(0, 2).map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).join('; '), text: l.text.slice(0, 80) });
  }
  return { records, invalid, offset, nextLine };
}

/**
 * Follows a state file as it grows: each {@link next} returns the records appended since the
 * last call (whole lines only). Used by the board (terminal and VS Code) and `runs status`.
 */
export class RunSetFollower {
  private offset = 0;
  private line = 1;
  readonly invalid: InvalidLine[] = [];

  constructor(readonly file: string) {}

  /** Records appended since the last call ([] when none; undefined while the file does not exist). */
  async next(): Promise<RunSetRecord[] | undefined> {
    const st = await fsp.stat(this.file).catch(() => undefined);
    if (!st) return undefined;
    if (st.size < this.offset) { this.offset = 0; this.line = 1; } // replaced: read again from the start
    if (st.size === this.offset) return [];
    const r = await readRunSet(this.file, this.offset, this.line);
    if (!r) return undefined;
    this.line = r.nextLine;
    this.offset = r.offset;
    this.invalid.push(...r.invalid);
    return r.records;
  }
}

/**
 * The writer of a state file: each {@link append} stamps `v` and `at`, checks the record against
 * the schema and appends it as one whole line (src/core/util/jsonl.ts `JsonLinesWriter`:
 * `O_APPEND`, every byte written, fsync'd), in call order. Other processes append to the same
 * file (`runs cancel`), so each append looks at the file's last byte again: a torn last line of a
 * writer killed mid-line is ended first and stays one invalid line of its own.
 */
export class RunSetLog {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string, private readonly now: () => number = Date.now) {}

  /** Appends `r`; resolves with the record as written. @throws ExpBenchError BAD_INPUT for a record that fails the schema (nothing written), or naming the file when it cannot be written */
  async append(r: NewRecord): Promise<RunSetRecord> {
    const checked = RunSetRecordSchema.safeParse({ v: STATE_VERSION, at: new Date(this.now()).toISOString(), ...r });
    if (!checked.success) {
      throw new ExpBenchError('BAD_INPUT', `${this.file} (${r.type})`, `not a valid run-set record: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    }
    // A writer of its own per line: it reads the last byte before writing (JsonLinesWriter's rule).
    const p = this.tail.then(() => new JsonLinesWriter(this.file).append([checked.data]));
    this.tail = p.catch(() => undefined);
    await p;
    return checked.data;
  }

  /** Waits for every append so far. */
  async flush(): Promise<void> {
    await this.tail;
  }
}
