import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExpBenchError, cancelled } from '../errors';
import { git } from '../git';
import { log } from '../log';
import type { Trajectory } from '../trajectory/types';
import { readJsonIfExists, writeJsonAtomic } from '../util/fs';
import { LIMITS, readUntrusted } from '../untrusted';
import { SerialChain } from '../util/serial';
import { errorMessage } from '../util/errors';
import { checkoutTaskStart, taskStartCommit } from '../workspace/patch';
import { gitPatch, Overlay, type FileChange } from './overlay';
import { changeChain, planSteps, type PlannedStep } from './plan';

const logger = log('viewer');

/** Version of the cache folder's `state.json`; another version is wiped and rebuilt. */
const CACHE_VERSION = 1;

/** A change the trees cannot show exactly, at the step that made it. */
export interface StepUncertainty {
  step: number;
  /** Workspace-relative path when known. */
  path?: string;
  why: string;
}

/** A file of a tree that differs from another tree (the base, or another step's). */
export interface ChangedFile {
  path: string;
  status: 'added' | 'modified' | 'deleted';
}

/** The workspace after step `step`, materialised. */
export interface StepTree {
  /** 0-based step index; -1 is the prepared workspace before any step. */
  step: number;
  /** The folder holding the tree (valid until a later call moves it forward or evicts it). */
  dir: string;
  /** The prepared workspace ("task start"), never changed. */
  baseDir: string;
  baseCommit: string;
  /** True when some step up to `step` changed files without recording their content (or its change could not be applied). */
  approximate: boolean;
  /** The first such step. */
  approximateFrom?: number;
  /** Every such change up to `step`, in step order. */
  uncertain: StepUncertainty[];
  /** Files that differ from the prepared workspace, sorted by path. */
  changed: ChangedFile[];
  /** Steps applied by this call (0 when a cached tree was reused as it was). */
  applied: number;
  /** `git apply` processes this call started. */
  applies: number;
}

/** One step's own change: each file it edited, before and after it, also as files for a diff view. */
export interface StepDiff {
  step: number;
  files: Array<FileChange & { beforeFile: string; afterFile: string }>;
  /** Changes of this step that carry no content (or did not apply). */
  uncertain: StepUncertainty[];
  approximate: boolean;
  approximateFrom?: number;
}

/** Step `step` against step `other`: git's diff between the two trees, and its files. */
export interface StepComparison {
  step: number;
  other: number;
  /** `git diff --no-index` from `other`'s tree to `step`'s, paths as `a/<path>` `b/<path>`. */
  diff: string;
  files: ChangedFile[];
  left: StepTree;
  right: StepTree;
}

/** Options of {@link RepoAtStep}. */
export interface RepoAtStepOptions {
  trajectory: Trajectory;
  /** A work tree whose root commit is "task start": a session's `workspace/`, or a fresh `prepare` of the task. */
  workspace: string;
  /** Where trees are kept (outside the workspace); default {@link defaultRepoCacheDir}. */
  cacheDir?: string;
  /** Trees kept besides the base (least recently used evicted); default 3, at least 2 (a comparison needs two). */
  maxTrees?: number;
  /**
   * `composed` (default): the steps between a cached tree and the one asked for are applied in
   * memory and written with ONE `git apply` of the combined patch; `per-step`: one `git apply`
   * per step (the same result, one process per step: the benchmark's comparison).
   */
  strategy?: 'composed' | 'per-step';
  signal?: AbortSignal;
}

interface TreeState {
  step: number;
  chain: string;
  /** Steps whose change could not be applied, with why. */
  failures: StepUncertainty[];
  /** Paths touched since the base. */
  touched: string[];
  usedAt: number;
}

interface CacheState {
  version: number;
  key: string;
  baseCommit: string;
  trees: TreeState[];
}

/** One chain per cache folder in this process: calls on one trajectory's trees never overlap. */
const chains = new Map<string, SerialChain>();

/**
 * `<XDG_CACHE_HOME or ~/.cache>/expbench/repo-at-step/<hash>`: the OS cache folder of one
 * trajectory's trees, by its file and id.
 */
export function defaultRepoCacheDir(t: Pick<Trajectory, 'file' | 'id'>): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const h = createHash('sha256').update(`${path.resolve(t.file)}#${t.id}`).digest('hex').slice(0, 20);
  return path.join(base, 'expbench', 'repo-at-step', h);
}

/**
 * The repository as it was after step N of a run on an EXP-Bench task: the prepared (masked)
 * workspace at "task start", plus the file changes of steps 0..N applied in order (unified diffs,
 * before/after pairs, whole contents, creations and deletions: stepEdits.ts), written with real
 * `git apply` through the git room. Trees live in the cache folder; moving forward applies only the
 * new steps to the nearest earlier tree. Where a step changed files without recording their content
 * (a shell-only agent's `sed -i`, a session's `file.changed`), the tree keeps the file as it was
 * known and says `approximate` from that step.
 */
export class RepoAtStep {
  readonly cacheDir: string;
  private readonly maxTrees: number;
  private readonly chain: SerialChain;
  private plan?: PlannedStep[];
  private chainOf?: string[];
  private state?: CacheState;

  constructor(private readonly o: RepoAtStepOptions) {
    this.cacheDir = path.resolve(o.cacheDir ?? defaultRepoCacheDir(o.trajectory));
    const ws = path.resolve(o.workspace);
    if (this.cacheDir === ws || this.cacheDir.startsWith(ws + path.sep)) throw new ExpBenchError('BAD_INPUT', this.cacheDir, 'the cache folder must be outside the workspace');
    this.maxTrees = Math.max(2, o.maxTrees ?? 3);
    this.chain = chains.get(this.cacheDir) ?? chains.set(this.cacheDir, new SerialChain()).get(this.cacheDir)!;
  }

  /** Number of steps of the trajectory. */
  get steps(): number { return this.o.trajectory.steps.length; }

  /**
   * The tree after step `step` (-1: the prepared workspace).
   * @param keep steps whose cached trees must stay as they are (a comparison's other side)
   * @throws ExpBenchError `BAD_INPUT` naming the step when it is outside -1..steps-1;
   *   `SESSION_INVALID` when the workspace has no "task start"; `GIT_FAILED`; `CANCELLED`.
   */
  at(step: number, keep: number[] = []): Promise<StepTree> {
    return this.chain.run(() => this.materialise(step, keep));
  }

  /**
   * The files step `step` edited, before and after it (written under `<cache>/steps/<step>/`;
   * an absent side is an empty file there, `before`/`after` `null`).
   */
  stepDiff(step: number): Promise<StepDiff> {
    return this.chain.run(async () => {
      this.checkStep(step, 0);
      const prev = await this.materialise(step - 1, []);
      const plan = this.plan![step];
      const overlay = new Overlay((p) => readText(prev.dir, p));
      const failures: StepUncertainty[] = [];
      for (const op of plan.ops) {
        const why = await overlay.apply(op);
        if (why) failures.push({ step, path: op.path, why });
      }
      const root = path.join(this.cacheDir, 'steps', String(step));
      await fsp.rm(root, { recursive: true, force: true });
      const files: StepDiff['files'] = [];
      const paths = [...new Set(plan.ops.map((op) => op.path))].sort();
      for (const p of paths) {
        const after = await overlay.get(p);
        const before = await readText(prev.dir, p);
        const beforeFile = path.join(root, 'before', p);
        const afterFile = path.join(root, 'after', p);
        await writeFile(beforeFile, before ?? '');
        await writeFile(afterFile, after ?? '');
        files.push({ path: p, before, after, beforeFile, afterFile });
      }
      const uncertain = [...plan.uncertain.map((u) => ({ step, ...u })), ...failures];
      const upTo = [...prev.uncertain, ...uncertain];
      return { step, files, uncertain, approximate: upTo.length > 0, ...(upTo.length ? { approximateFrom: Math.min(...upTo.map((u) => u.step)) } : {}) };
    });
  }

  /** Step `step` against step `other` (either may be -1): `git diff --no-index` of the two trees. */
  compare(step: number, other: number): Promise<StepComparison> {
    return this.chain.run(async () => {
      const left = await this.materialise(other, [step]);
      const right = await this.materialise(step, [other]);
      const diff = left.dir === right.dir ? '' : await diffTrees(left.dir, right.dir, this.o.signal);
      return { step, other, diff, files: filesOfDiff(diff), left, right };
    });
  }

  /** Removes the cache folder (every tree of this trajectory). */
  clear(): Promise<void> {
    return this.chain.run(async () => { this.state = undefined; await fsp.rm(this.cacheDir, { recursive: true, force: true }); });
  }

  /** Removes the trees of steps, keeping the prepared workspace (the next call starts from it). */
  clearTrees(): Promise<void> {
    return this.chain.run(async () => {
      const st = await this.open();
      for (const t of st.trees) await fsp.rm(this.treeDir(t.step), { recursive: true, force: true });
      st.trees = [];
      await this.save();
    });
  }

  private checkStep(step: number, min: number): void {
    if (!Number.isInteger(step) || step < min || step >= this.steps) {
      throw new ExpBenchError('BAD_INPUT', `step ${step}`, `the trajectory ${this.o.trajectory.id} has steps 0..${this.steps - 1}${min < 0 ? ' (-1: before the first)' : ''}`);
    }
  }

  private get baseDir(): string { return path.join(this.cacheDir, 'base'); }
  private treeDir(step: number): string { return path.join(this.cacheDir, 'trees', String(step)); }

  /** Opens the cache: the base tree checked out once, the state read (wiped when it belongs to another trajectory or base). */
  private async open(): Promise<CacheState> {
    if (this.state) return this.state;
    const t = this.o.trajectory;
    const baseCommit = await taskStartCommit(this.o.workspace);
    const key = `${t.format}:${path.resolve(t.file)}#${t.id}`;
    const file = path.join(this.cacheDir, 'state.json');
    let st = await readJsonIfExists<CacheState>(file).catch(() => undefined);
    if (!st || st.version !== CACHE_VERSION || st.key !== key || st.baseCommit !== baseCommit || !(await isDir(this.baseDir))) {
      await fsp.rm(this.cacheDir, { recursive: true, force: true });
      await fsp.mkdir(this.cacheDir, { recursive: true });
      await checkoutTaskStart(this.o.workspace, this.baseDir);
      st = { version: CACHE_VERSION, key, baseCommit, trees: [] };
      await writeJsonAtomic(file, st, { fsync: false });
    }
    const top = new Set(await fsp.readdir(this.baseDir));
    this.plan = planSteps(t.steps, top);
    this.chainOf = changeChain(t.steps);
    // A tree whose history changed (or whose folder is gone) is not reused.
    const valid: TreeState[] = [];
    for (const tr of st.trees) {
      if (tr.step < this.steps && this.chainOf[tr.step] === tr.chain && (await isDir(this.treeDir(tr.step)))) valid.push(tr);
      else await fsp.rm(this.treeDir(tr.step), { recursive: true, force: true });
    }
    st.trees = valid;
    this.state = st;
    return st;
  }

  /**
   * Writes the state, without fsync: a cache (a lost write costs a rebuild; a tree is named only
   * once it is complete, and a named tree whose folder is gone is dropped on open).
   */
  private async save(): Promise<void> {
    await writeJsonAtomic(path.join(this.cacheDir, 'state.json'), this.state, { fsync: false });
  }

  private async materialise(step: number, keep: number[]): Promise<StepTree> {
    this.checkStep(step, -1);
    if (this.o.signal?.aborted) throw cancelled(this.cacheDir);
    const st = await this.open();
    if (step === -1) return this.result(step, this.baseDir, { step: -1, chain: '', failures: [], touched: [], usedAt: Date.now() }, 0, 0);
    const exact = st.trees.find((t) => t.step === step);
    if (exact) { exact.usedAt = Date.now(); await this.save(); return this.result(step, this.treeDir(step), exact, 0, 0); }
    const from = st.trees.filter((t) => t.step < step).sort((a, b) => b.step - a.step)[0];
    const dir = this.treeDir(step);
    await fsp.mkdir(path.dirname(dir), { recursive: true });
    await fsp.rm(dir, { recursive: true, force: true }); // a tree left half-written by a process that died
    let tree: TreeState;
    if (from && !keep.includes(from.step)) {
      await fsp.rename(this.treeDir(from.step), dir);
      st.trees = st.trees.filter((t) => t !== from);
      tree = { ...from, failures: [...from.failures], touched: [...from.touched] };
    } else {
      await fsp.cp(from ? this.treeDir(from.step) : this.baseDir, dir, { recursive: true, verbatimSymlinks: true });
      tree = from ? { ...from, failures: [...from.failures], touched: [...from.touched] } : { step: -1, chain: '', failures: [], touched: [], usedAt: 0 };
    }
    const first = tree.step + 1;
    let applies = 0;
    try {
      applies = await this.applySteps(dir, first, step, tree);
    } catch (e) {
      await fsp.rm(dir, { recursive: true, force: true });
      throw e;
    }
    tree.step = step;
    tree.chain = this.chainOf![step];
    tree.usedAt = Date.now();
    st.trees.push(tree);
    await this.evict(new Set([step, ...keep]));
    await this.save();
    return this.result(step, dir, tree, step - first + 1, applies);
  }

  /** Applies steps first..last onto the tree in `dir`; returns the number of `git apply` runs. */
  private async applySteps(dir: string, first: number, last: number, tree: TreeState): Promise<number> {
    const touched = new Set(tree.touched);
    const perStep = this.o.strategy === 'per-step';
    let overlay = new Overlay((p) => readText(dir, p));
    let applies = 0;
    for (let i = first; i <= last; i++) {
      for (const op of this.plan![i].ops) {
        touched.add(op.path);
        const why = await overlay.apply(op);
        if (why) tree.failures.push({ step: i, path: op.path, why });
      }
      if (perStep || i === last) {
        if (await this.write(dir, overlay.changes())) applies++;
        overlay = new Overlay((p) => readText(dir, p));
      }
      if (this.o.signal?.aborted) throw cancelled(this.cacheDir);
    }
    tree.touched = [...touched].sort();
    return applies;
  }

  /** Writes `changes` into the tree with one `git apply` (no repository around it: the git layer's empty one). */
  private async write(dir: string, changes: FileChange[]): Promise<boolean> {
    const patch = gitPatch(changes);
    if (!patch) return false;
    try {
      await git(['apply', '--whitespace=nowarn', '-'], { repo: 'none', cwd: dir, input: patch, subject: dir, signal: this.o.signal });
    } catch (e) {
      throw new ExpBenchError('GIT_FAILED', dir, `git apply refused the combined change of ${changes.length} file(s) (${changes.slice(0, 3).map((c) => c.path).join(', ')}): ${errorMessage(e)}`, { cause: e });
    }
    return true;
  }

  private async evict(keep: Set<number>): Promise<void> {
    const st = this.state!;
    const order = [...st.trees].sort((a, b) => a.usedAt - b.usedAt);
    while (st.trees.length > this.maxTrees) {
      const victim = order.shift();
      if (!victim) break;
      if (keep.has(victim.step)) continue;
      st.trees = st.trees.filter((t) => t !== victim);
      await fsp.rm(this.treeDir(victim.step), { recursive: true, force: true });
      logger.debug(`repo at step: evicted the tree of step ${victim.step}`);
    }
  }

  private async result(step: number, dir: string, tree: TreeState, applied: number, applies: number): Promise<StepTree> {
    const uncertain: StepUncertainty[] = [];
    for (let i = 0; i <= step; i++) for (const u of this.plan![i].uncertain) uncertain.push({ step: i, ...u });
    uncertain.push(...tree.failures.filter((f) => f.step <= step));
    uncertain.sort((a, b) => a.step - b.step);
    const changed: ChangedFile[] = [];
    for (const p of tree.touched) {
      const [b, a] = await Promise.all([readBytes(this.baseDir, p), readBytes(dir, p)]);
      if (b === null && a !== null) changed.push({ path: p, status: 'added' });
      else if (b !== null && a === null) changed.push({ path: p, status: 'deleted' });
      else if (b !== null && a !== null && !b.equals(a)) changed.push({ path: p, status: 'modified' });
    }
    return {
      step, dir, baseDir: this.baseDir, baseCommit: this.state!.baseCommit, approximate: uncertain.length > 0,
      ...(uncertain.length ? { approximateFrom: uncertain[0].step } : {}), uncertain, changed, applied, applies,
    };
  }
}

/** `git diff --no-index` from tree `a` to tree `b` (siblings), paths rewritten to `a/<path>`, `b/<path>`. */
async function diffTrees(a: string, b: string, signal?: AbortSignal): Promise<string> {
  const cwd = path.dirname(a) === path.dirname(b) ? path.dirname(a) : '/';
  const ra = path.relative(cwd, a);
  const rb = path.relative(cwd, b);
  const r = await git(['diff', '--no-index', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', '--', ra, rb], { repo: 'none', cwd, okCodes: [1], signal, subject: cwd });
  // A created file's `diff --git` line names it under the new tree on both sides, a deleted one under the old tree.
  const fix = (line: string) => [ra, rb].reduce((l, r) => l.split(`a/${r}/`).join('a/').split(`b/${r}/`).join('b/')
    .split(`"a/${r}/`).join('"a/').split(`"b/${r}/`).join('"b/'), line);
  return r.text.split('\n').map((l) => (/^(?:diff --git |--- |\+\+\+ )/.test(l) ? fix(l) : l)).join('\n');
}

/** The files of a git diff (`diff --git` sections), with their status. */
export function filesOfDiff(diff: string): ChangedFile[] {
  const out: ChangedFile[] = [];
  for (const section of diff.split(/^(?=diff --git )/m)) {
    const m = /^diff --git (?:"?a\/)(.*?)"? (?:"?b\/)(.*?)"?\n/.exec(section);
    if (!m) continue;
    const status = /^new file mode/m.test(section) ? 'added' : /^deleted file mode/m.test(section) ? 'deleted' : 'modified';
    out.push({ path: status === 'deleted' ? m[1] : m[2], status });
  }
  return out;
}

/**
 * A file's bytes under `root` (a session's workspace: the solver's), or null when it is absent or
 * not readable as a regular file inside `root`: a link (never followed), a FIFO or device (never
 * opened), anything over LIMITS.workspaceFileBytes (untrusted reader: openUntrusted).
 */
async function readBytes(root: string, rel: string): Promise<Buffer | null> {
  try {
    return (await readUntrusted(path.join(root, rel), { within: root, maxBytes: LIMITS.workspaceFileBytes, what: rel })) ?? null;
  } catch (e) {
    logger.debug(`repo at step: ${rel} not read (${errorMessage(e)})`);
    return null;
  }
}

/** A file's text, or null when it is absent, a folder, or binary (a NUL in its first 8000 bytes, git's rule). */
async function readText(root: string, rel: string): Promise<string | null> {
  const b = await readBytes(root, rel);
  if (!b || b.subarray(0, 8000).includes(0)) return null;
  return b.toString('utf8');
}

async function writeFile(file: string, text: string): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await fsp.writeFile(file, text);
}

async function isDir(p: string): Promise<boolean> {
  return fsp.stat(p).then((s) => s.isDirectory(), () => false);
}
