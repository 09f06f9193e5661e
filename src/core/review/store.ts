import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { errorMessage } from '../util/errors';
import { isTempFile, readRegularFile, writeAtomic } from '../util/fs';
import { canonicalJson } from './canonical';
import { whoAmI } from './keys';
import { describeSubject, subjectKey, subjectSegments } from './subject';
import {
  JUDGEMENT_VERSION, JudgementSchema, LIST_KINDS, SubjectSchema, VALUE_SCHEMAS,
  type Judgement, type JudgementKind, type ReviewFilter, type ReviewProblem, type Subject,
} from './types';

const logger = log('review');

/** What {@link ReviewStore.add} takes: `by` defaults to {@link whoAmI}. */
export interface NewJudgement {
  subject: Subject;
  kind: JudgementKind;
  value: unknown;
  reason?: string;
  by?: string;
}

let lastAt = 0;

/**
 * The time of a new judgement (ISO 8601): now, but at least 1 ms after every judgement this process
 * made and after those of `seen` (the subject's, for a replacing kind): two added within one
 * millisecond would else be ordered by their random ids ({@link compareJudgements}), and the
 * latest of a kind would be either one.
 */
function laterThan(seen: readonly Judgement[]): string {
  const last = seen.reduce((m, x) => Math.max(m, Date.parse(x.at) || 0), lastAt);
  lastAt = Math.max(Date.now(), last + 1);
  return new Date(lastAt).toISOString();
}

/** Earlier first: by `at`, then by `id` (two judgements of one millisecond keep one order everywhere). */
export function compareJudgements(a: Judgement, b: Judgement): number {
  return a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The current judgement of `subject` and `kind` among `all`: the latest (see {@link compareJudgements}),
 * or undefined. For list kinds (comment, tag, dispute, task-edit) every one counts; this is then the last added.
 */
export function latestOf(all: readonly Judgement[], subject: Subject, kind: JudgementKind): Judgement | undefined {
  const key = subjectKey(subject);
  let best: Judgement | undefined;
  for (const j of all) if (j.kind === kind && subjectKey(j.subject) === key && (!best || compareJudgements(best, j) < 0)) best = j;
  return best;
}

/** The file name of a judgement: `<at in ISO 8601 basic form>-<id>.json` (`20261201T160732.123Z-1f…json`: no `:`, sorts by time). */
export function judgementFileName(j: Pick<Judgement, 'at' | 'id'>): string {
  return `${j.at.replace(/[-:]/g, '')}-${j.id}.json`;
}

/**
 * The review store: one JSON file per judgement under `root` (docs/review.md), in the folder of
 * its subject (src/core/review/subject.ts), keys sorted, written atomically; never changed once
 * written. Files written by two people merge under git without conflict (their names differ).
 */
export class ReviewStore {
  /** Adds of this process, in call order (so that `before` sees the previous add). */
  private queue: Promise<unknown> = Promise.resolve();

  /** @param root the store's folder (created on the first add) */
  constructor(readonly root: string) {}

  /**
   * Stores a new judgement and returns it. `before` is the value of the latest judgement of the same
   * subject and kind, for the kinds that replace (all but comment, tag, dispute, task-edit).
   * @throws ExpBenchError `BAD_INPUT` naming the subject when the subject or the value does not fit
   *   the schema (docs/review.md), naming the file when it cannot be written
   */
  add(j: NewJudgement): Promise<Judgement> {
    const run = this.queue.catch(() => undefined).then(() => this.addNow(j));
    this.queue = run;
    return run;
  }

  private async addNow(input: NewJudgement): Promise<Judgement> {
    const subject = parseOrThrow(SubjectSchema, input.subject, 'the subject', JSON.stringify(input.subject)) as Subject;
    const what = describeSubject(subject);
    const schema = VALUE_SCHEMAS[input.kind];
    if (!schema) throw new ExpBenchError('BAD_INPUT', what, `unknown judgement kind ${JSON.stringify(input.kind)}`);
    const value = parseOrThrow(schema, input.value, `a ${input.kind} value`, what);
    const by = (input.by ?? await whoAmI()).trim();
    if (!by) throw new ExpBenchError('BAD_INPUT', what, 'the judge (by) is empty');
    const dir = path.join(this.root, ...subjectSegments(subject));
    const here = LIST_KINDS.has(input.kind) ? [] : (await this.readFolder(dir, false)).judgements;
    const j: Judgement = {
      version: JUDGEMENT_VERSION, id: randomBytes(8).toString('hex'), at: laterThan(here), by, subject, kind: input.kind, value,
    };
    if (input.reason !== undefined && input.reason.trim()) j.reason = input.reason.trim();
    const prev = latestOf(here, subject, input.kind);
    if (prev) j.before = prev.value;
    const file = path.join(dir, judgementFileName(j));
    await writeAtomic(file, canonicalJson(j));
    logger.info(`${j.by} added ${j.kind} on ${what} (${path.relative(this.root, file)})`);
    return j;
  }

  /**
   * The judgements that match `filter`, earliest first; files that are not judgements are logged
   * and left out. A command that shows or exports judgements uses {@link read} and says what it
   * left out (docs/review.md "Damaged files").
   */
  async list(filter: ReviewFilter = {}): Promise<Judgement[]> {
    const { judgements, problems } = await this.read(filter);
    for (const p of problems) logger.warn(`${p.file}: ${p.message}`);
    return judgements;
  }

  /**
   * The judgements that match `filter`, earliest first, and the store's files that could not be
   * read as judgements, each naming its file and why: empty, not JSON (torn), not the schema
   * (`{}`), another version, in the folder of another subject, a folder named `*.json`, a symbolic
   * link (never followed) or another special file. An absent root is an empty store.
   */
  async read(filter: ReviewFilter = {}): Promise<{ judgements: Judgement[]; problems: ReviewProblem[] }> {
    const all = await this.readFolder(this.root, true);
    return { judgements: all.judgements.filter((j) => matches(j, filter)).sort(compareJudgements), problems: all.problems };
  }

  /** Reads the `.json` files of `dir` (and of its sub-folders when `deep`). */
  private async readFolder(dir: string, deep: boolean): Promise<{ judgements: Judgement[]; problems: ReviewProblem[] }> {
    const judgements: Judgement[] = [];
    const problems: ReviewProblem[] = [];
    const walk = async (d: string): Promise<void> => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = await fsp.readdir(d, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
        problems.push({ file: d, message: `cannot read the folder: ${errorMessage(e)}` });
        return;
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of entries) {
        const p = path.join(d, e.name);
        if (e.isDirectory() && e.name.endsWith('.json')) { problems.push({ file: p, message: 'is a folder named like a judgement file: not read (move it out of the store)' }); continue; }
        if (e.isDirectory()) { if (deep && !e.name.startsWith('.')) await walk(p); continue; }
        if (!e.name.endsWith('.json') || isTempFile(e.name)) continue;
        const r = await this.readOne(p, d);
        if ('problem' in r) problems.push({ file: p, message: r.problem }); else judgements.push(r.judgement);
      }
    };
    await walk(dir);
    return { judgements, problems };
  }

  private async readOne(file: string, dir: string): Promise<{ judgement: Judgement } | { problem: string }> {
    let data: unknown;
    try {
      // Links are never followed: a judgement is the file in its subject's folder, nothing else.
      const buf = await readRegularFile(file, { noFollow: true });
      if (buf === undefined) return { problem: 'vanished while the store was read' };
      if (buf.length === 0 || !/\S/.test(buf.toString('utf8'))) return { problem: 'is empty (a write that never finished): not a judgement' };
      data = JSON.parse(buf.toString('utf8'));
    } catch (e) {
      return { problem: e instanceof SyntaxError ? `not valid JSON (${e.message}): a torn or hand-edited file` : errorMessage(e).replace(`${file}: `, '') };
    }
    const v = (data as { version?: unknown } | null)?.version;
    if (typeof v === 'number' && v !== JUDGEMENT_VERSION) return { problem: `judgement version ${v}, this tool reads version ${JUDGEMENT_VERSION}: update EXP-Bench Workbench` };
    const r = JudgementSchema.safeParse(data);
    if (!r.success) return { problem: `not a judgement: ${r.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}` };
    const j = r.data as Judgement;
    const home = path.join(this.root, ...subjectSegments(j.subject));
    if (path.resolve(home) !== path.resolve(dir)) {
      return { problem: `its subject (${describeSubject(j.subject)}) belongs in ${path.relative(this.root, home)}/: move it there` };
    }
    return { judgement: j };
  }
}

function matches(j: Judgement, f: ReviewFilter): boolean {
  if (f.kind !== undefined && j.kind !== f.kind) return false;
  if (f.run !== undefined && (j.subject.kind === 'task' || j.subject.run !== f.run)) return false;
  if (f.task !== undefined && (j.subject.kind === 'run' || j.subject.task !== f.task)) return false;
  return true;
}

function parseOrThrow(schema: { safeParse(v: unknown): { success: true; data: unknown } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }, v: unknown, what: string, input: string): unknown {
  const r = schema.safeParse(v);
  if (r.success) return r.data;
  throw new ExpBenchError('BAD_INPUT', input, `not ${what}: ${r.error.issues.map((i) => `${i.path.map(String).join('.') || 'value'}: ${i.message}`).join('; ')}`);
}
