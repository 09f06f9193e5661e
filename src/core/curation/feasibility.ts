import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import type Docker from 'dockerode';
import { ExpBenchError, isExpBenchError } from '../errors';
import { git } from '../git';
import { log } from '../log';
import { connectDocker, createContainer, DEFAULT_IMAGE, execText, gpusAvailable, inspectImage, removeContainer } from '../sandbox';
import type { Task } from '../tasks/types';
import { errorMessage } from '../util/errors';
import { ensurePristine } from '../workspace/cache';
import { covers, maskRules } from '../workspace/mask';
import { classifySource, defaultCacheDir, looksLikeUrl } from '../workspace/source';
import { curationFileFor, readCurationFile, type CurationFile } from './curationFile';
import { parseRequirements, type DeclaredRequirement } from './requirements';

const logger = log('curation.feasibility');

/** One thing the task's environment needs, and whether this machine (or the image) has it. */
export interface FeasibilityNeed {
  kind: 'gpu' | 'image' | 'package' | 'debian-package' | 'data' | 'setup' | 'time' | 'memory';
  /** What is needed: `8 GPU(s)`, `deprecation`, `/data/imagenet`, `2 h`. */
  what: string;
  /** true: present; false: missing (the task cannot run here as it is); undefined: not checked or only informative. */
  have: boolean | undefined;
  /** How it was found out, said plainly (`imports as deprecation 2.1.0`, `No module named 'deprecation'`). */
  detail: string;
  /** Where the need was read: the curation file, a requirements file at the pin, or the task. */
  source: string;
}

/** Whether a task can run on this machine, before anyone starts the clock. */
export interface Feasibility {
  taskId: string;
  /** `cannot-run`: a need is missing; `can-run`: every checked need is present; `unknown`: nothing could be checked. */
  verdict: 'can-run' | 'cannot-run' | 'unknown';
  /** `curation`: the curation file's environment; `probe`: the image probed for the declared requirements; `none`. */
  from: 'curation' | 'probe' | 'none';
  image: string;
  curationFile?: string;
  /** The repository commit whose requirement files were read, when they were. */
  commit?: string;
  /** Expected run time, seconds (the curation file's `limits.timeSeconds`). */
  expectedRunSeconds?: number;
  needs: FeasibilityNeed[];
  /** What could not be checked and why (no source, no engine, probe timed out…). */
  notes: string[];
  /** One line: `can run here`, `cannot run here: needs 8 GPU(s) (this machine has none)`. */
  summary: string;
}

export interface FeasibilityOptions {
  task: Pick<Task, 'id' | 'type' | 'file' | 'conference' | 'paperId' | 'paper' | 'question' | 'method' | 'agentInstructions' | 'usageInstructions' | 'requirements' | 'source' | 'maskedSource'>;
  /**
   * false (a solver's brief): nothing of the hidden ground truth shapes the result: a notebook is
   * detected from the question, method and agent instructions only, and requirement files the
   * task masks are not read. Default true (curators, the CLI).
   */
  useGroundTruth?: boolean;
  /** Repository to read requirement files from; default the curation file's, else the task's `local_repo`/`code_url`. */
  source?: string;
  /** Commit; default the curation file's pin, else the source's HEAD. */
  commit?: string;
  /** Image; default the curation file's `baseImage`, else expbench/sandbox:1. */
  image?: string;
  cacheDir?: string;
  docker?: Docker;
  /** Probe the image for the declared requirements even when the curation file has an environment (default: only without one). */
  probe?: boolean;
  /** false: a git URL source is not cloned to read its requirements (a note says so); default true. */
  allowClone?: boolean;
  /** Bound of the whole probe container run, ms (default 60 000). */
  probeTimeoutMs?: number;
  signal?: AbortSignal;
}

/** Default bound of the probe, ms. */
export const PROBE_TIMEOUT_MS = 60_000;

/**
 * What the task's environment needs and whether this machine has it (docs/curation.md,
 * "Feasibility"). From the paper's curation file when it has an `environment` (GPUs against the
 * engine's GPU support, data mounts against the host, the image's presence, its Debian packages,
 * the expected run time); otherwise, and with `probe`, by probing the image: one container,
 * network `none`, runs `python3` to import each requirement declared at the pin
 * (`requirements*.txt`, `setup.py`, `pyproject.toml` at the root, read from the pristine cache)
 * and, for a notebook task, Jupyter's `nbconvert`. Never throws for what it cannot check (no
 * engine, no source, a probe over its bound): that goes to `notes`, and the verdict is
 * `unknown` unless a checked need is missing.
 * @throws ExpBenchError `CANCELLED` when `signal` fires; `BAD_INPUT` naming the curation file when it is not valid
 */
export async function checkFeasibility(o: FeasibilityOptions): Promise<Feasibility> {
  const file = curationFileFor(o.task.file);
  const read = await readCurationFile(file, `${o.task.conference}/${o.task.paperId}`);
  if (read && !read.curation) {
    throw new ExpBenchError('BAD_INPUT', file, `the curation file is not valid: ${read.problems.slice(0, 3).map((p) => `${p.pointer || '(root)'}: ${p.message}`).join('; ')}`);
  }
  const curation = read?.curation;
  const env = curation?.environment;
  const image = o.image ?? env?.baseImage ?? DEFAULT_IMAGE;
  const needs: FeasibilityNeed[] = [];
  const notes: string[] = [];
  const docker = o.docker ?? connectDocker();
  const cf = read ? file : undefined;

  const engine = await inspectImage(docker, image).then((info) => ({ ok: true, info }), (e: unknown) => ({ ok: false, info: undefined, error: errorMessage(e) }));
  if (!engine.ok) notes.push(`the Docker engine could not be asked (${(engine as { error?: string }).error}): the image and GPUs are not checked`);
  else needs.push({ kind: 'image', what: image, have: engine.info !== undefined, detail: engine.info ? `present (${engine.info.id.slice(7, 19)})` : 'not present on this machine', source: cf ?? 'default' });

  if (env) {
    if ((env.gpus ?? 0) > 0) {
      const has = engine.ok ? await gpusAvailable(docker) : undefined;
      needs.push({ kind: 'gpu', what: `${env.gpus} GPU(s)`, have: has === undefined ? undefined : has ? undefined : false,
        detail: has === undefined ? 'not checked (no engine)' : has ? 'the engine has GPU support (the number of GPUs is not checked)' : 'this machine\'s engine has no GPU support', source: file });
    }
    for (const m of env.mounts ?? []) {
      const ok = await fsp.stat(m.host).then((s) => s.isDirectory() || s.isFile(), () => false);
      needs.push({ kind: 'data', what: m.host, have: ok, detail: ok ? `present, mounted read-only at ${m.container}` : `absent on this machine: download it to ${m.host}`, source: file });
    }
    if (env.setup?.length) needs.push({ kind: 'setup', what: env.setup.join(' && '), have: undefined, detail: 'setup commands run in the image (network may be needed)', source: file });
    if (env.dockerfile) needs.push({ kind: 'setup', what: env.dockerfile, have: undefined, detail: 'a Dockerfile to build the image from, on a machine with network', source: file });
    if (env.limits?.memoryMiB) needs.push({ kind: 'memory', what: `${env.limits.memoryMiB} MiB`, have: undefined, detail: 'memory limit of one run', source: file });
  }
  const expectedRunSeconds = env?.limits?.timeSeconds;
  if (expectedRunSeconds) needs.push({ kind: 'time', what: formatSeconds(expectedRunSeconds), have: undefined, detail: 'expected run time (the run\'s limit)', source: file });

  const probing = o.probe === true || !env;
  let commit: string | undefined;
  if (engine.ok && engine.info && (probing || env?.debianPackages?.length)) {
    let declared: DeclaredRequirement[] = [];
    if (probing) {
      const read2 = await declaredRequirements(o, curation, notes);
      declared = read2.requirements;
      commit = read2.commit;
      if (isNotebookTask(o.task, o.useGroundTruth !== false)) declared.push({ name: 'nbconvert', file: 'the task (a notebook is run)', modules: ['nbconvert'] });
    }
    const debian = env?.debianPackages ?? [];
    if (declared.length || debian.length) {
      const probed = await probeImage(docker, image, o.task.id, declared, debian, o.probeTimeoutMs ?? PROBE_TIMEOUT_MS, o.signal);
      if ('error' in probed) notes.push(probed.error);
      else {
        for (const r of probed.reqs) {
          const d = declared.find((x) => x.name === r.name);
          needs.push({
            kind: 'package', what: r.name, have: r.module !== null,
            detail: r.module !== null ? `imports as ${r.module}${r.version ? ` ${r.version}` : ''}` : `${r.version ? `installed (${r.version}) but ` : ''}${r.error ?? 'not importable'}`,
            source: d?.file ?? 'the task',
          });
        }
        for (const p of probed.debian) {
          needs.push({ kind: 'debian-package', what: p.name, have: p.installed, detail: p.installed ? `installed ${p.version ?? ''}`.trim() : 'not installed in the image', source: file });
        }
      }
    }
  }
  const from = env ? 'curation' : needs.some((n) => n.kind === 'package') ? 'probe' : 'none';
  const missing = needs.filter((n) => n.have === false);
  const checked = needs.some((n) => n.have !== undefined && n.kind !== 'image');
  const verdict = missing.length ? 'cannot-run' : checked || env ? 'can-run' : 'unknown';
  const summary = verdict === 'cannot-run' ? `cannot run here: ${missing.map((n) => `needs ${n.what} (${n.detail})`).join('; ')}`
    : verdict === 'can-run' ? `can run here${expectedRunSeconds ? ` (expected run time ${formatSeconds(expectedRunSeconds)})` : ''}`
      : `not known: ${notes[0] ?? 'nothing declares what the task needs'}`;
  return { taskId: o.task.id, verdict, from, image, ...(cf ? { curationFile: cf } : {}), ...(commit ? { commit } : {}),
    ...(expectedRunSeconds ? { expectedRunSeconds } : {}), needs, notes, summary };
}

/** A task whose ground truth runs a notebook (usage instructions, sources or references name an `.ipynb`). */
function isNotebookTask(t: FeasibilityOptions['task'], groundTruth: boolean): boolean {
  const visible = [t.question, t.method, t.agentInstructions];
  const hidden = groundTruth ? [t.usageInstructions, ...t.source, ...t.maskedSource, ...t.requirements.flatMap((r) => r.refs.map((x) => x.path))] : [];
  return [...visible, ...hidden].some((s) => /\.ipynb\b/i.test(s ?? ''));
}

/** Requirement files at the root read at the pin from the pristine cache. Failures go to `notes`. */
async function declaredRequirements(o: FeasibilityOptions, curation: CurationFile | undefined, notes: string[]): Promise<{ requirements: DeclaredRequirement[]; commit?: string }> {
  const source = o.source ?? curation?.repository?.url ?? o.task.paper?.localRepo ?? o.task.paper?.codeUrl;
  if (!source) { notes.push('no repository known for the task (give a source): its declared requirements are not probed'); return { requirements: [] }; }
  if (o.allowClone === false && looksLikeUrl(source)) { notes.push(`${source} is not cloned for this check: its declared requirements are probed once the task is opened`); return { requirements: [] }; }
  try {
    const p = await ensurePristine({ source: await classifySource(source), commit: o.commit ?? curation?.repository?.commit, cacheDir: o.cacheDir ?? defaultCacheDir(), signal: o.signal });
    const listing = await git(['ls-tree', '--name-only', p.commit], { repo: { gitDir: p.repo }, signal: o.signal });
    const rules = o.useGroundTruth === false ? maskRules(o.task) : [];
    const names = listing.text.split('\n').filter((n) => /^(requirements[\w.-]*\.txt|setup\.py|pyproject\.toml)$/i.test(n) && !rules.some((r) => covers(r.path, n)));
    const requirements: DeclaredRequirement[] = [];
    for (const name of names.sort()) {
      const text = (await git(['cat-file', 'blob', `${p.commit}:${name}`], { repo: { gitDir: p.repo }, signal: o.signal })).text;
      for (const r of parseRequirements(name, text)) if (!requirements.some((x) => x.name === r.name)) requirements.push(r);
    }
    if (!names.length) notes.push(`no requirements.txt, setup.py or pyproject.toml at the root of ${source} at ${p.commit.slice(0, 12)}`);
    return { requirements, commit: p.commit };
  } catch (e) {
    if (isExpBenchError(e, 'CANCELLED')) throw e;
    notes.push(`the repository's requirements could not be read (${errorMessage(e)})`);
    return { requirements: [] };
  }
}

/** Python run in the probe container: argv[1] is `{reqs: [{name, modules}], debian: [names]}`; prints one JSON line. */
const PROBE_SCRIPT = `
import json, sys, importlib, subprocess
import importlib.metadata as md
spec = json.loads(sys.argv[1])
dists = {}
try:
    for mod, ds in md.packages_distributions().items():
        for d in ds: dists.setdefault(d.lower().replace('_', '-'), []).append(mod)
except Exception:
    pass
out = {"reqs": [], "debian": []}
for r in spec["reqs"]:
    version = None
    try: version = md.version(r["name"])
    except Exception: pass
    mods = [m for m in dists.get(r["name"].lower().replace('_', '-'), []) if not m.startswith('_')] + r["modules"]
    found, error = None, None
    for m in mods:
        try:
            importlib.import_module(m); found = m; break
        except BaseException as e:
            error = error or (type(e).__name__ + ": " + str(e))
    out["reqs"].append({"name": r["name"], "version": version, "module": found, "error": None if found else error})
for p in spec["debian"]:
    q = subprocess.run(["dpkg-query", "-W", "-f=\${Status}\\t\${Version}", p], capture_output=True, text=True)
    status, _, version = q.stdout.partition("\\t")
    ok = q.returncode == 0 and status.endswith(" installed")
    out["debian"].append({"name": p, "installed": ok, "version": version if ok else None})
print("EXPBENCH-PROBE " + json.dumps(out))
`;

interface ProbeResult {
  reqs: Array<{ name: string; version: string | null; module: string | null; error: string | null }>;
  debian: Array<{ name: string; installed: boolean; version: string | null }>;
}

/** One container (network none, 2 GiB, removed after), one python3 process, bounded by `timeoutMs`. */
async function probeImage(docker: Docker, image: string, taskId: string, reqs: DeclaredRequirement[], debian: string[], timeoutMs: number, signal?: AbortSignal): Promise<ProbeResult | { error: string }> {
  const bound = AbortSignal.timeout(timeoutMs);
  const both = signal ? AbortSignal.any([signal, bound]) : bound;
  let id: string | undefined;
  try {
    const created = await createContainer(docker, {
      image, labels: { task: taskId, session: `feasibility-${randomBytes(4).toString('hex')}`, role: 'verify' },
      extraLabels: { 'expbench.purpose': 'feasibility' },
      limits: { network: false, memoryBytes: 2 * 1024 ** 3, pids: 512 }, user: 'solver', workdir: '/tmp',
    });
    id = created.id;
    const spec = JSON.stringify({ reqs: reqs.map((r) => ({ name: r.name, modules: r.modules })), debian });
    const r = await execText(created.container, { cmd: ['python3', '-c', PROBE_SCRIPT, spec], signal: both, killGraceMs: 500 });
    if (signal?.aborted) throw new ExpBenchError('CANCELLED', taskId, 'the feasibility probe was cancelled');
    if (r.aborted) return { error: `the probe of ${image} did not finish within ${timeoutMs / 1000} s: its imports are not known` };
    const line = r.stdout.split('\n').find((l) => l.startsWith('EXPBENCH-PROBE '));
    if (!line) return { error: `the probe of ${image} failed (exit ${r.exitCode}): ${r.stderr.trim().split('\n').slice(-2).join(' ') || 'no output'}` };
    return JSON.parse(line.slice('EXPBENCH-PROBE '.length)) as ProbeResult;
  } catch (e) {
    if (isExpBenchError(e, 'CANCELLED')) throw e;
    logger.warn(`feasibility probe of ${image}: ${errorMessage(e)}`);
    return { error: `the image could not be probed (${errorMessage(e)})` };
  } finally {
    if (id) await removeContainer(docker, id).catch((e: unknown) => logger.warn(`removing probe container ${id}: ${errorMessage(e)}`));
  }
}

function formatSeconds(s: number): string {
  return s >= 3600 ? `${+(s / 3600).toFixed(1)} h` : s >= 60 ? `${+(s / 60).toFixed(1)} min` : `${s} s`;
}
