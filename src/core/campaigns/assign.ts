import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { wildcard } from '../runs/wildcard';
import { covers } from '../workspace/mask';

/** One assignment: a person's session of one task (a unit of the campaign's run set). */
export interface Assignment { person: string; task: string }

/**
 * A task as assignment sees it: its id, its paper (`<conference>/<paperId>`), and what its
 * workspace hides: the repository it is prepared from ({@link repositoryKey}) and the task's mask
 * paths (`maskRules` of src/core/workspace/mask.ts: repository-relative files or folders; the
 * root README is masked for every task, so it is not listed).
 */
export interface AssignableTask { id: string; paper: string; repository?: string; masked?: readonly string[] }

/**
 * One repository however it is written: a folder as its absolute path; a URL without its scheme,
 * user, trailing `/` and `.git`, in lower case, the scp form `git@host:owner/repo` as
 * `host/owner/repo` (`https://GitHub.com/x/Toycal.git/` and `git@github.com:x/toycal` are one).
 */
export function repositoryKey(source: string): string {
  const s = source.trim();
  if (path.isAbsolute(s) || s.startsWith('.')) return `path:${path.resolve(s)}`;
  let u = s.toLowerCase().replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/^[^@/]*@/, '');
  const scp = /^([^/:]+):(?!\d+\/)(.*)$/.exec(u);
  if (scp) u = `${scp[1]}/${scp[2]}`;
  u = u.replace(/:\d+\//, '/');
  while (u.endsWith('/')) u = u.slice(0, -1);
  if (u.endsWith('.git')) u = u.slice(0, -4);
  return `url:${u}`;
}

/** A person given two tasks where one task's workspace holds what the other masks. */
export interface MaskSight { person: string; task: string; sees: string; path: string }

/**
 * The pairs of one person's tasks where the workspace of `sees` holds a path that `task` masks:
 * two tasks of one paper (or one repository) whose masks differ, so that working on one shows the
 * other's ground-truth implementation (the tasks of an EXP-Bench paper mask different scripts of
 * the same repository). A path masked by `task` is hidden in `sees`'s workspace only when one of
 * `sees`'s mask paths is it or a folder above it (`covers`). Tasks with no `masked` list are not
 * compared (nothing known). Empty when nobody can see a masked file.
 */
export function maskSights(assignment: readonly Assignment[], tasks: readonly AssignableTask[]): MaskSight[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const mine = new Map<string, AssignableTask[]>();
  for (const a of assignment) {
    const t = byId.get(a.task);
    if (!t) continue;
    const list = mine.get(a.person);
    if (list) list.push(t); else mine.set(a.person, [t]);
  }
  const out: MaskSight[] = [];
  for (const [person, list] of mine) {
    for (const t of list) {
      for (const o of list) {
        if (o === t || !t.masked || !o.masked) continue;
        if (o.paper !== t.paper && (!t.repository || o.repository !== t.repository)) continue;
        const seen = t.masked.find((p) => !o.masked!.some((q) => covers(q, p)));
        if (seen !== undefined) out.push({ person, task: t.id, sees: o.id, path: seen });
      }
    }
  }
  return out;
}

/**
 * {@link maskSights} as a refusal: a campaign is proctored, and a person who can read one task's
 * masked implementation in another task's workspace has reached its ground truth.
 * @throws ExpBenchError BAD_INPUT naming `input` (the spec's assignment), each person and pair, and what to change
 */
export function refuseMaskSights(input: string, assignment: readonly Assignment[], tasks: readonly AssignableTask[]): void {
  const sights = maskSights(assignment, tasks);
  if (!sights.length) return;
  const lines = sights.slice(0, 20).map((s) => `  ${s.person}: ${s.sees}'s workspace holds ${s.path}, which ${s.task} masks`);
  if (sights.length > 20) lines.push(`  … and ${sights.length - 20} more`);
  throw new ExpBenchError('BAD_INPUT', input, `gives one person two tasks of one repository whose masks differ, so one task's workspace shows the other's masked (ground-truth) files; nothing is written:\n${lines.join('\n')}\ngive each person at most one of these tasks (a smaller baseline.perPerson.tasks, "fixed" lists, or tasks of other papers)`);
}

/**
 * The tasks in round-robin order over their papers (papers in first-mention order, each paper's
 * tasks in their order): the first task of every paper, then the second, …; so that consecutive
 * tasks come from different papers while any paper has tasks left.
 */
export function interleaveByPaper(tasks: readonly AssignableTask[]): AssignableTask[] {
  const byPaper = new Map<string, AssignableTask[]>();
  for (const t of tasks) {
    const l = byPaper.get(t.paper);
    if (l) l.push(t); else byPaper.set(t.paper, [t]);
  }
  const lists = [...byPaper.values()];
  const out: AssignableTask[] = [];
  for (let round = 0; out.length < tasks.length; round++) for (const l of lists) if (round < l.length) out.push(l[round]);
  return out;
}

/**
 * The `balanced` assignment (docs/campaigns.md "Assignment"): with the tasks interleaved by paper
 * ({@link interleaveByPaper}) as positions 0..m-1 and `k` tasks per person (`perPerson`, default
 * every task), person i (in the spec's order) gets positions i·k … i·k+k-1, modulo m. So every
 * person gets exactly k tasks, none twice; each task is given to ⌊n·k/m⌋ or ⌈n·k/m⌉ people; and a
 * person's tasks are consecutive in the paper round-robin, so they come from k different papers
 * when the papers have equal numbers of tasks and k is at most the number of papers. Deterministic:
 * the same people and tasks give the same assignment.
 * @throws ExpBenchError BAD_INPUT when `perPerson` is more than the tasks selected (a task at most once per person)
 */
export function balancedAssignment(people: readonly string[], tasks: readonly AssignableTask[], perPerson?: number): Assignment[] {
  const m = tasks.length;
  if (m === 0) return [];
  const k = perPerson ?? m;
  if (k > m) throw new ExpBenchError('BAD_INPUT', 'baseline.perPerson.tasks', `${k} tasks per person, but the spec selects ${m} task(s): nobody gets a task twice`);
  const order = interleaveByPaper(tasks);
  const out: Assignment[] = [];
  people.forEach((person, i) => {
    for (let j = 0; j < k; j++) out.push({ person, task: order[(i * k + j) % m].id });
  });
  return out;
}

/**
 * The `fixed` assignment: each person's listed ids and globs (`*` = one segment) against the
 * selected tasks, in the order listed, each task once per person.
 * @throws ExpBenchError BAD_INPUT naming a selector that matches none of the spec's tasks, and a baseliner with no task
 */
export function fixedAssignment(people: readonly string[], tasks: readonly AssignableTask[], fixed: Readonly<Record<string, readonly string[]>>): Assignment[] {
  const out: Assignment[] = [];
  for (const person of people) {
    const sels = Object.hasOwn(fixed, person) ? fixed[person] : [];
    if (!sels.length) throw new ExpBenchError('BAD_INPUT', `baseline.fixed.${person}`, 'this baseliner has no task: list their tasks, or leave them out of "baseliners"');
    const mine = new Set<string>();
    for (const sel of sels) {
      const segs = sel.split('/');
      const hits = tasks.filter((t) => segs.length === 3 && t.id.split('/').every((p, i) => wildcard(segs[i], p)));
      if (!hits.length) throw new ExpBenchError('BAD_INPUT', `baseline.fixed.${person}: ${sel}`, 'matches none of the spec\'s tasks');
      for (const t of hits) if (!mine.has(t.id)) { mine.add(t.id); out.push({ person, task: t.id }); }
    }
  }
  return out;
}

/** How an assignment differs from another, in words (`+ ana fixture2026/90001/3`, `- bo …`); [] when the same. */
export function assignmentChanges(before: readonly Assignment[], after: readonly Assignment[]): string[] {
  const key = (a: Assignment) => `${a.person} ${a.task}`;
  const b = new Set(before.map(key));
  const a = new Set(after.map(key));
  return [...after.filter((x) => !b.has(key(x))).map((x) => `+ ${key(x)}`), ...before.filter((x) => !a.has(key(x))).map((x) => `- ${key(x)}`)];
}
