import { ExpBenchError } from '../errors';
import { git } from '../git';
import type { DesignVariable, Task } from '../tasks/types';
import { ensurePristine } from '../workspace/cache';
import { applyMask, maskRules, type MaskedFile } from '../workspace/mask';
import { classifySource, defaultCacheDir } from '../workspace/source';
import type { TreeFile } from '../workspace/tree';

/** One reference of a requirement, resolved in the tree at the pin. */
export interface ResolvedRef {
  /** As written in the task (repository-relative). */
  path: string;
  startLine: number | null;
  endLine: number | null;
  cell?: number;
  /** `exact`: that file exists; `resolved`: a bare or partial name matched the one file ending with it; `ambiguous`/`missing`: not opened. */
  status: 'exact' | 'resolved' | 'ambiguous' | 'missing';
  /** The file opened (repository-relative), for `exact` and `resolved`. */
  file?: string;
  /** Other candidates, for `ambiguous` (up to 5). */
  candidates?: string[];
}

/** A task's ground truth as a curator checks it: everything the solver never sees, at the pin. */
export interface GroundTruth {
  taskId: string;
  question: string;
  /** The pristine (bare) cache repository and the pinned commit read. */
  repo: string;
  commit: string;
  design: { constants: DesignVariable[]; independent: DesignVariable[]; dependent: DesignVariable[] };
  requirements: Array<{ index: number; text: string; refs: ResolvedRef[] }>;
  expectedOutcome: string;
  usageInstructions: string;
  /** What the workspace masks at the pin, with blob ids of the original contents. */
  masked: MaskedFile[];
  /** Set when the mask could not be applied at this commit (a masked path missing): the message. */
  maskProblem?: string;
}

/**
 * Reads a task's ground truth at `commit` (default the source's HEAD) of `source`, through the
 * pristine cache: design variables by role, requirements with each reference resolved in the tree
 * (a bare name by the one path ending with it), expected outcome, usage instructions, and the
 * masked paths with their blob ids (the workspace's own mask, src/core/workspace/mask.ts).
 * Submodules' files are not listed.
 * @throws ExpBenchError `SOURCE_UNAVAILABLE` / `GIT_FAILED` from the cache and the git layer; `CANCELLED`
 */
export async function readGroundTruth(task: Task, o: { source: string; commit?: string; cacheDir?: string; signal?: AbortSignal }): Promise<GroundTruth> {
  const p = await ensurePristine({ source: await classifySource(o.source), commit: o.commit, cacheDir: o.cacheDir ?? defaultCacheDir(), signal: o.signal });
  const listing = await git(['ls-tree', '-r', '-z', '--full-tree', p.commit], { repo: { gitDir: p.repo }, signal: o.signal });
  const files: TreeFile[] = [];
  for (const rec of listing.text.split('\0')) {
    const m = /^(\d+) blob ([0-9a-f]+)\t([\s\S]+)$/.exec(rec);
    if (m) files.push({ mode: m[1], sha: m[2], path: m[3], repo: p.repo });
  }
  let masked: MaskedFile[] = [];
  let maskProblem: string | undefined;
  try {
    masked = applyMask(task.id, p.commit, files, maskRules(task)).masked;
  } catch (e) {
    if (!(e instanceof ExpBenchError)) throw e;
    maskProblem = e.message;
  }
  const paths = files.map((f) => f.path);
  const set = new Set(paths);
  const resolve = (ref: Task['requirements'][number]['refs'][number]): ResolvedRef => {
    const base = { path: ref.path, startLine: ref.startLine, endLine: ref.endLine, ...(ref.cell !== undefined ? { cell: ref.cell } : {}) };
    if (set.has(ref.path)) return { ...base, status: 'exact', file: ref.path };
    const tail = '/' + ref.path.replace(/^\/+/, '');
    const found = paths.filter((x) => x.endsWith(tail));
    if (found.length === 1) return { ...base, status: 'resolved', file: found[0] };
    if (found.length > 1) return { ...base, status: 'ambiguous', candidates: found.slice(0, 5) };
    return { ...base, status: 'missing' };
  };
  return {
    taskId: task.id, question: task.question, repo: p.repo, commit: p.commit,
    design: { constants: task.design.constants, independent: task.design.independent, dependent: task.design.dependent },
    requirements: task.requirements.map((r, i) => ({ index: i + 1, text: r.text, refs: r.refs.map(resolve) })),
    expectedOutcome: task.expectedOutcome, usageInstructions: task.usageInstructions, masked,
    ...(maskProblem ? { maskProblem } : {}),
  };
}

/** The ground truth as Markdown (the curator's read-only document); references as `path:lines` with their status. */
export function groundTruthMarkdown(g: GroundTruth): string {
  // a variable given as a list of values has them as its description too (joined with '; '): shown once
  const variable = (v: DesignVariable) => (v.values?.length
    ? `- **${v.name}**${v.description && v.description !== v.values.join('; ') ? `: ${v.description}` : ''} — values: ${v.values.map((x) => `\`${x}\``).join(', ')}`
    : `- **${v.name}**: ${v.description}`);
  const vars = (title: string, vs: DesignVariable[]) => [`### ${title}`, '', ...(vs.length ? vs.map(variable) : ['_none_']), ''];
  const ref = (r: ResolvedRef) => {
    const lines = r.startLine === null ? '' : `:${r.startLine}${r.endLine !== r.startLine ? `-${r.endLine}` : ''}${r.cell !== undefined ? ` in cell ${r.cell}` : ''}`;
    const where = r.status === 'resolved' ? ` → resolved to \`${r.file}\`` : r.status === 'ambiguous' ? ` → ambiguous: ${r.candidates!.map((c) => `\`${c}\``).join(', ')}` : r.status === 'missing' ? ' → **not in the tree**' : '';
    return `\`${r.path}${lines}\`${where}`;
  };
  return [
    `# Ground truth of ${g.taskId}`, '', `Pinned commit \`${g.commit}\` (pristine cache \`${g.repo}\`). Curator view: never shown to solvers.`, '',
    '## Question', '', g.question, '',
    '## Design variables', '', ...vars('Constant', g.design.constants), ...vars('Independent', g.design.independent), ...vars('Dependent', g.design.dependent),
    '## Requirements', '', ...(g.requirements.length ? g.requirements.flatMap((r) => [`${r.index}. ${r.text.replace(/\s+/g, (ws) => (ws.includes('\n') ? ' ' : ws))}`, ...r.refs.map((x) => `   - ${ref(x)}`)]) : ['_none_']), '',
    '## Expected outcome', '', g.expectedOutcome || '_empty_', '',
    '## Usage instructions', '', g.usageInstructions || '_empty_', '',
    '## Masked paths', '', ...(g.maskProblem ? [`**${g.maskProblem}**`, ''] : []),
    ...(g.masked.length ? g.masked.map((m) => `- \`${m.path}\` blob \`${m.blob}\` (${m.reason})`) : ['_none_']), '',
  ].join('\n');
}
