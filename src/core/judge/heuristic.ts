import { distance } from 'fastest-levenshtein';
import {
  designVariables, executionFrom, scoreDesign, scoreImplementation, solverDesignItems,
  type JudgeInput, type JudgeOptions,
} from './common';
import { hunkCitation, parseHunks, symbolsOf, type Hunk } from './hunks';
import { readLogLines, scanLog } from './monitor';
import { lineCount } from './pristine';
import { PROMPT_VERSION, type DesignVerdict, type JudgeRecord, type RequirementVerdict } from './types';

/**
 * The deterministic offline pre-judge (`kind: 'heuristic'`), used when no endpoint is configured.
 * It makes no model call and its record is labelled "heuristic" everywhere; it is never mixed
 * with LLM verdicts. What it does:
 * - design: fuzzy word overlap of each ground-truth variable (name, description) with the
 *   solver's design items: matched when ≥ 60% of the name's words or ≥ 50% of the description's
 *   words occur in one item (words equal up to one edit for words of 5+ letters), partial at 30% / 25%;
 * - implementation: per requirement, files touched versus the ground-truth references and
 *   symbols (names defined in the ground-truth ranges, code words of the requirement) found in the
 *   patch's added lines: met = reference file touched and ≥ half the symbols found, partial =
 *   either, unmet = neither, unverifiable = no reference and no symbol to look for;
 * - conclusion: not judged (needs semantics); the verifier's claims check is reported instead;
 * - monitor: the deterministic log scan only; execution: the verification record (exit, clean
 *   tree, claims, script lint).
 */
export async function judgeHeuristic(input: JudgeInput, opts: JudgeOptions = {}): Promise<JudgeRecord> {
  const pc = opts.partialCredit ?? 0.5;
  const notes: string[] = ['heuristic pre-judge: no model was called; verdicts are word and file overlaps, not judgements'];
  if (!input.pristine) notes.push('no pinned pristine checkout found: symbols taken from requirement text only');
  const execution = executionFrom(input.verify);
  if (!execution.available) notes.push('no verification record (private/verify/latest.json): E not run');

  const vars = designVariables(input.task);
  const items = solverDesignItems(input.answers);
  const itemWords = items.map(words);
  const relevant = new Array(items.length).fill(false);
  const dv: DesignVerdict[] = vars.map((v) => {
    let best = { score: 0, i: -1, kind: 'missing' as DesignVerdict['verdict'] };
    itemWords.forEach((iw, i) => {
      const nameScore = coverage(words(v.name.replace(/_/g, ' ')), iw);
      const descScore = coverage(words(v.description), iw);
      const kind = nameScore >= 0.6 || descScore >= 0.5 ? 'matched' : nameScore >= 0.3 || descScore >= 0.25 ? 'partial' : 'missing';
      const score = Math.max(nameScore, descScore);
      if (kind !== 'missing') relevant[i] = true;
      if (rankOf(kind) > rankOf(best.kind) || (kind === best.kind && score > best.score)) best = { score, i, kind };
    });
    return {
      variable: v.name, role: v.role, verdict: best.kind, quote: best.kind === 'missing' ? '' : items[best.i],
      reason: `heuristic: ${Math.round(best.score * 100)}% word overlap with the closest design item`,
    };
  });
  const design = vars.length === 0 ? scoreDesign('not_applicable', [], [], pc)
    : scoreDesign('ok', dv, items.map((text, i) => ({ text, relevant: relevant[i] })), pc);

  const hunks = parseHunks(input.patch);
  const verdicts = await requirementVerdicts(input, hunks);
  const implementation = scoreImplementation(input.task.type === 3 ? 'method' : 'requirements', verdicts, pc, hunks.length, []);

  const lines = readLogLines(input.eventsJsonl ?? '');
  const deterministic = scanLog(lines, [...input.maskedPaths, ...(input.task.type === 2 ? input.task.source : [])]);
  const found = execution.claims.filter((c) => c.found).length;
  return {
    schemaVersion: 1, kind: 'heuristic', taskId: input.task.id, paperId: input.task.paperId, taskType: input.task.type,
    createdAt: (opts.now?.() ?? new Date()).toISOString(), promptVersion: PROMPT_VERSION, model: null, decoding: null, partialCredit: pc,
    design,
    conclusion: {
      status: 'not_judged', verdict: null, numbers: [],
      reason: execution.available
        ? `heuristic: conclusions are not judged without a model; the verifier found ${found} of ${execution.claims.length} claimed values in the outputs`
        : 'heuristic: conclusions are not judged without a model; no verification record',
    },
    implementation, execution,
    monitor: { deterministic, llm: null, linesTotal: lines.length, linesUnseen: 0, flagged: deterministic.some((f) => f.severity === 'violation') },
    ledger: { calls: [], totals: { calls: 0, cachedCalls: 0, promptTokens: 0, completionTokens: 0, usd: 0, unpricedCalls: 0 } },
    harnessErrors: [], notes,
  };
}

async function requirementVerdicts(input: JudgeInput, hunks: Hunk[]): Promise<RequirementVerdict[]> {
  const t = input.task;
  const items = t.type === 3 || t.requirements.length === 0
    ? (t.method.trim() ? [{ text: t.method, refs: [] as { path: string; startLine: number | null; endLine: number | null }[], basis: 'method' as const }] : [])
    : t.requirements.map((r) => ({ text: r.text, refs: r.refs as { path: string; startLine: number | null; endLine: number | null }[], basis: 'requirement' as const }));
  const out: RequirementVerdict[] = [];
  for (const [i, it] of items.entries()) {
    let gtText = '';
    const groundTruth: RequirementVerdict['groundTruth'] = [];
    for (const ref of it.refs) {
      const text = input.pristine ? await input.pristine.read(ref.path) : undefined;
      if (text === undefined) continue;
      const lines = text.split('\n');
      const start = ref.startLine ?? 1;
      const end = Math.min(ref.endLine ?? lineCount(text), lineCount(text));
      // A reference past the file's end (or not a whole line number) has no ground-truth lines.
      if (!Number.isSafeInteger(start) || start < 1 || start > end) continue;
      gtText += lines.slice(start - 1, end).join('\n') + '\n';
      groundTruth.push({ path: ref.path, startLine: start, endLine: end });
    }
    const symbols = symbolsOf(gtText, it.text);
    const refPaths = it.refs.map((r) => r.path);
    const names = new Set(refPaths.map((p) => p.split('/').pop()));
    const inRefFile = hunks.filter((h) => !h.deletedFile && (refPaths.includes(h.path) || names.has(h.path.split('/').pop())));
    const addedAll = hunks.map((h) => h.added.toLowerCase());
    const hits = symbols.filter((s) => addedAll.some((a) => a.includes(s)));
    const symbolHunks = hunks.filter((h) => !h.deletedFile && hits.some((s) => h.added.toLowerCase().includes(s)));
    const pathHit = inRefFile.length > 0;
    let verdict: RequirementVerdict['verdict'];
    if (refPaths.length === 0 && symbols.length === 0) verdict = 'unverifiable';
    else if ((pathHit || refPaths.length === 0) && (symbols.length === 0 ? pathHit : hits.length / symbols.length >= 0.5)) verdict = 'met';
    else if (pathHit || hits.length > 0) verdict = 'partial';
    else verdict = 'unmet';
    const cited = [...new Set([...inRefFile, ...symbolHunks])].slice(0, 5);
    const reason = `heuristic: ${refPaths.length ? `reference file${refPaths.length > 1 ? 's' : ''} ${pathHit ? '' : 'not '}touched; ` : 'no reference file; '}`
      + `${hits.length} of ${symbols.length} symbols found in added lines${hits.length ? ` (${hits.slice(0, 6).join(', ')})` : ''}`;
    out.push({
      index: i + 1, requirement: it.text, basis: it.basis, status: 'ok', verdict, judgeVerdict: verdict, reason,
      hunks: verdict === 'unmet' || verdict === 'unverifiable' ? [] : cited.map(hunkCitation),
      groundTruth, citationProblems: [], shownHunks: [],
    });
  }
  return out;
}

const STOP = new Set(['the', 'and', 'for', 'with', 'from', 'that', 'this', 'are', 'was', 'were', 'each', 'into', 'over', 'such', 'their', 'its', 'use', 'used', 'using', 'e.g', 'i.e', 'etc', 'of', 'to', 'in', 'on', 'a', 'an', 'or', 'by', 'as', 'is', 'be', 'at']);

function words(s: string): string[] {
  return [...new Set(s.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length >= 2 && !STOP.has(w)).map((w) => w.replace(/(?<=\w{3})s$/, '')))];
}

/** Share of `target` words found in `have` (equal, or one edit apart for words of 5+ letters). */
function coverage(target: string[], have: string[]): number {
  if (target.length === 0) return 0;
  const hit = target.filter((w) => have.some((h) => h === w || (w.length >= 5 && h.length >= 5 && distance(w, h) <= 1))).length;
  return hit / target.length;
}

function rankOf(k: DesignVerdict['verdict']): number {
  return k === 'matched' ? 2 : k === 'partial' ? 1 : 0;
}
