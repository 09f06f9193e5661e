import type { Phase } from '../steps/phases';
import { callTokens, type Actor, type Purpose, type Stage, type Step, type StepKind } from '../steps/step';
import type { Trajectory, TrajSpan } from '../trajectory/types';

/**
 * The trajectory viewer's timeline (room `viewer`, pure): one {@link RowSummary} per step, filters
 * (kind, actor, phase, tool, pinned), full-text search over a step's text, action (tool, command,
 * arguments) and observation, and phase bands. Built once per trajectory; the lower-cased search
 * index is built on the first search and kept (100,000 steps search in well under 200 ms, see
 * bench/viewer.bench.ts).
 *
 * Units: tokens are counts (a model call's tokens as its source counts them, cache reads and
 * writes included: `callTokens`); cost is US dollars; times are milliseconds.
 */

/** Characters of a row's short text. */
export const ROW_TEXT_CHARS = 160;

/** One row of the timeline, what the webview's virtual list shows. */
export interface RowSummary {
  /** The step's index (0-based, as in the trajectory). */
  step: number;
  kind: StepKind;
  actor: Actor;
  phase: Phase;
  /** Not the agent's work: setup, scoring, cleanup, harness (shown in place of the phase). */
  stage?: Stage;
  /** The task, a system prompt, a demonstration, the final submission. */
  purpose?: Purpose;
  /** Depth of the step's span (Inspect; 0 = top level), for indentation. */
  depth?: number;
  /** The step carries the model's reasoning apart from its reply. */
  reasoning?: boolean;
  /** The action's tool when the step has one. */
  tool?: string;
  /** One line, at most {@link ROW_TEXT_CHARS} characters: the text, else the command, else the edits' paths, else the observation. */
  text: string;
  /** Tokens of this step's model call as its source counts them (absent when the source gives none). */
  tokens?: number;
  /** Cost of this step, USD (absent when the source gives none). */
  costUsd?: number;
  /** Tokens of this step and every step before it. */
  totalTokens: number;
  /** Cost of this step and every step before it, USD. */
  totalCostUsd: number;
  /** ms after the trajectory's first timed step, when the step has a time. */
  relMs?: number;
  durationMs?: number;
  /** The observation's exit code, when it has one. */
  exitCode?: number | null;
  /** True when the observation is an error or the step carries errors. */
  error?: boolean;
  /** Number of file edits the step carries. */
  edits?: number;
}

/** What to keep; an absent or empty list keeps every value. */
export interface TimelineFilter {
  kinds?: readonly (StepKind | string)[];
  actors?: readonly (Actor | string)[];
  phases?: readonly (Phase | string)[];
  /** Stages (`setup`, `scoring`, `cleanup`, `harness`); `''` stands for the agent's work. */
  stages?: readonly string[];
  /** Tool names; `''` stands for steps without a tool. */
  tools?: readonly string[];
  /** Keep only pinned steps (the `pinned` set given to {@link Timeline.filter}). */
  pinned?: boolean;
}

/** A run of consecutive steps (view positions `from`..`to`, inclusive) in one phase, or one stage of the harness's work (`stage` set, `phase` then the stage's name). */
export interface PhaseBand { phase: Phase | Stage; from: number; to: number; stage?: boolean }

/** The fields a search looks in. */
export type SearchField = 'text' | 'action' | 'observation';

/** One occurrence of the query in a step: `field`, and `start`..`end` (exclusive) in that field's text (see {@link fieldTexts}). */
export interface MatchPosition { field: SearchField; start: number; end: number }

/** Counts per value, for the filter chips. */
export interface Facets {
  kinds: Record<string, number>;
  actors: Record<string, number>;
  phases: Record<string, number>;
  /** Stage → steps; `''` counts the agent's own steps. */
  stages: Record<string, number>;
  /** Tool name → steps; `''` counts the steps without a tool. */
  tools: Record<string, number>;
}

/** A search's answer over a list of steps. */
export interface SearchResult {
  /** Positions (in the list searched) of the steps that match, ascending. */
  positions: number[];
  /** Occurrences over all those steps. */
  occurrences: number;
  /** Time the search took, ms. */
  ms: number;
}

/**
 * The searchable text of a step, per field: `text`; `action` = tool, command and the arguments
 * (JSON unless a string), one per line; `observation` = the observation's text. The match
 * positions of {@link Timeline.matches} are offsets into these strings.
 */
export function fieldTexts(s: Step): Record<SearchField, string> {
  const a = s.action;
  let action = '';
  if (a) {
    const args = a.arguments === undefined ? '' : typeof a.arguments === 'string' ? a.arguments : safeJson(a.arguments);
    action = [a.tool, a.command ?? '', args].filter(Boolean).join('\n');
  }
  return { text: s.text ?? '', action, observation: s.observation?.text ?? '' };
}

const FIELDS: SearchField[] = ['text', 'action', 'observation'];
/** A row's text before {@link Timeline.row} fills it (a distinct string object, never a real text). */
const UNSET = String.fromCharCode(0x1, 0x2);
/** Between fields in the index: a character no query can contain (queries are cut at it). */
const SEP = '\u0000';

/** The timeline of one trajectory. */
export class Timeline {
  /**
   * One row per step, in step order. Their `text` is filled on first use by {@link row} (a row's
   * short text is most of the cost of a row, and only the rows shown need it): read rows through
   * {@link row}.
   */
  readonly rows: RowSummary[];
  /** Sums over all steps. */
  readonly totals: { steps: number; tokens: number; costUsd: number; timed: number };
  private index?: string[];
  private spans?: Map<string, TrajSpan>;
  private calls?: Map<string, number>;

  constructor(readonly trajectory: Trajectory) {
    let tokens = 0; let cost = 0;
    this.rows = trajectory.steps.map((s, i) => {
      const t = stepTokens(s);
      const c = s.model?.costUsd;
      tokens += t ?? 0; cost += c ?? 0;
      const r: RowSummary = { step: i, kind: s.kind, actor: s.actor, phase: s.phase, text: UNSET, totalTokens: tokens, totalCostUsd: cost };
      if (s.stage) r.stage = s.stage;
      if (s.purpose) r.purpose = s.purpose;
      if (s.span) r.depth = s.span.depth;
      if (s.reasoning) r.reasoning = true;
      if (s.action?.tool) r.tool = s.action.tool;
      if (t !== undefined) r.tokens = t;
      if (c !== undefined) r.costUsd = c;
      if (s.time) { r.relMs = s.time.relMs; if (s.time.durationMs !== undefined) r.durationMs = s.time.durationMs; }
      if (s.observation?.exitCode !== undefined) r.exitCode = s.observation.exitCode;
      if (s.observation?.error || s.errors?.length || s.kind === 'error') r.error = true;
      if (s.edits?.length) r.edits = s.edits.length;
      return r;
    });
    let timed = 0;
    for (const s of trajectory.steps) if (s.time) timed++;
    this.totals = { steps: this.rows.length, tokens, costUsd: cost, timed };
  }

  /** Row `step` with its short text (undefined beyond the end). */
  row(step: number): RowSummary | undefined {
    const r = this.rows[step];
    if (r && r.text === UNSET) r.text = shortText(this.trajectory.steps[step]);
    return r;
  }

  /** Counts of each kind, actor, phase and tool over all steps. */
  facets(): Facets {
    const f: Facets = { kinds: {}, actors: {}, phases: {}, stages: {}, tools: {} };
    for (const r of this.rows) {
      f.kinds[r.kind] = (f.kinds[r.kind] ?? 0) + 1;
      f.actors[r.actor] = (f.actors[r.actor] ?? 0) + 1;
      // the harness's work has no phase of the agent's
      if (!r.stage) f.phases[r.phase] = (f.phases[r.phase] ?? 0) + 1;
      f.stages[r.stage ?? ''] = (f.stages[r.stage ?? ''] ?? 0) + 1;
      const t = r.tool ?? '';
      f.tools[t] = (f.tools[t] ?? 0) + 1;
    }
    return f;
  }

  /**
   * The steps that pass `f`, ascending (step indices). Values within one facet are alternatives
   * (or); facets combine (and).
   * @param pinned the pinned steps, used when `f.pinned` is set
   */
  filter(f: TimelineFilter = {}, pinned: ReadonlySet<number> = new Set()): number[] {
    const kinds = set(f.kinds); const actors = set(f.actors); const phases = set(f.phases); const tools = set(f.tools); const stages = set(f.stages);
    const out: number[] = [];
    for (const r of this.rows) {
      if (kinds && !kinds.has(r.kind)) continue;
      if (actors && !actors.has(r.actor)) continue;
      if (phases && (r.stage || !phases.has(r.phase))) continue;
      if (stages && !stages.has(r.stage ?? '')) continue;
      if (tools && !tools.has(r.tool ?? '')) continue;
      if (f.pinned && !pinned.has(r.step)) continue;
      out.push(r.step);
    }
    return out;
  }

  /**
   * Case-insensitive search of `query` (cut at the first NUL; leading and trailing space kept, so
   * `' x '` finds the word) in each step of `steps` (default: all), in its text, action and
   * observation. An empty query matches nothing.
   */
  search(query: string, steps?: readonly number[]): SearchResult {
    const t0 = performance.now();
    const q = query.split(SEP)[0].toLowerCase();
    const positions: number[] = [];
    let occurrences = 0;
    if (q) {
      const index = this.searchIndex();
      const n = steps ? steps.length : index.length;
      for (let p = 0; p < n; p++) {
        const hay = index[steps ? steps[p] : p];
        if (hay === undefined) continue;
        let at = hay.indexOf(q);
        if (at < 0) continue;
        positions.push(p);
        while (at >= 0) { occurrences++; at = hay.indexOf(q, at + q.length); }
      }
    }
    return { positions, occurrences, ms: performance.now() - t0 };
  }

  /** Where `query` occurs in step `step`, per field (offsets into {@link fieldTexts}). */
  matches(step: number, query: string): MatchPosition[] {
    const s = this.trajectory.steps[step];
    const q = query.split(SEP)[0].toLowerCase();
    if (!s || !q) return [];
    const texts = fieldTexts(s);
    const out: MatchPosition[] = [];
    for (const field of FIELDS) {
      const hay = texts[field].toLowerCase();
      for (let at = hay.indexOf(q); at >= 0; at = hay.indexOf(q, at + q.length)) out.push({ field, start: at, end: at + q.length });
    }
    return out;
  }

  /** Runs of equal phase over `steps` (default all), as positions in that list. */
  bands(steps?: readonly number[]): PhaseBand[] {
    const out: PhaseBand[] = [];
    const n = steps ? steps.length : this.rows.length;
    for (let p = 0; p < n; p++) {
      const r = this.rows[steps ? steps[p] : p];
      const phase = r.stage ?? r.phase;
      const last = out[out.length - 1];
      if (last && last.phase === phase && last.to === p - 1 && !!last.stage === !!r.stage) last.to = p;
      else out.push({ phase, from: p, to: p, ...(r.stage ? { stage: true } : {}) });
    }
    return out;
  }

  /** The spans step `step` ran in, outermost first (Inspect; empty for other formats). */
  spanPath(step: number): TrajSpan[] {
    const id = this.trajectory.steps[step]?.span?.id;
    if (!id) return [];
    const byId = this.spanIndex();
    const out: TrajSpan[] = [];
    for (let s = byId.get(id); s && out.length < 64; s = s.parent ? byId.get(s.parent) : undefined) out.unshift(s);
    return out;
  }

  /**
   * Names of the spans that open at `step` in a view where `prev` is the row before it (undefined
   * for the first row): those of its span path that the previous row's path does not hold.
   */
  spansOpening(step: number, prev: number | undefined): string[] {
    const mine = this.spanPath(step);
    if (!mine.length) return [];
    const before = new Set(prev === undefined ? [] : this.spanPath(prev).map((s) => s.id));
    return mine.filter((s) => !before.has(s.id)).map((s) => s.name);
  }

  /** The step of the tool call with call id `id` (a tool step whose action carries it), or undefined. */
  stepOfCall(id: string): number | undefined {
    if (!this.calls) {
      this.calls = new Map();
      this.trajectory.steps.forEach((s, i) => { if (s.kind !== 'model' && s.action?.callId && !this.calls!.has(s.action.callId)) this.calls!.set(s.action.callId, i); });
    }
    return this.calls.get(id);
  }

  private spanIndex(): Map<string, TrajSpan> {
    this.spans ??= new Map((this.trajectory.spans ?? []).map((s) => [s.id, s]));
    return this.spans;
  }

  /** The lower-cased search text of every step (built once, on first use). */
  searchIndex(): string[] {
    if (!this.index) {
      this.index = this.trajectory.steps.map((s) => {
        const f = fieldTexts(s);
        return `${f.text}${SEP}${f.action}${SEP}${f.observation}`.toLowerCase();
      });
    }
    return this.index;
  }
}

/** A step's model-call tokens as the source counts them (cache included; `callTokens`); undefined when the source gives none. */
export function stepTokens(s: Step): number | undefined {
  return callTokens(s.model);
}

/** A step's one-line text (see {@link RowSummary.text}). */
export function shortText(s: Step): string {
  // each candidate is cut before it is looked at: a row never costs more than a few hundred characters
  const head = (t: string | undefined) => (t === undefined ? '' : t.slice(0, HEAD_CHARS).trim());
  // a model step whose message is only a tool call shows the call; a JSON text (Inspect `info` data) its fields
  const folded = s.kind === 'model' && !s.action && Array.isArray(s.extra?.calls) ? `→ ${(s.extra!.calls as Array<{ tool?: string }>).map((c) => c.tool ?? 'tool').join(', ')}` : '';
  const call = s.kind === 'model' && s.action ? `→ ${s.action.tool}(${head(s.action.command) || (s.action.arguments !== undefined ? head(typeof s.action.arguments === 'string' ? s.action.arguments : safeJson(s.action.arguments, HEAD_CHARS)) : '')})` : '';
  const pick = readableJson(s.text) || head(s.text) || folded || call || head(s.action?.command)
    || (s.reasoning ? `(reasoning) ${head(s.reasoning.text ?? s.reasoning.summary) || 'redacted by the provider'}` : '')
    || (s.edits?.length ? s.edits.slice(0, 4).map((e) => `${e.op ?? 'edit'} ${e.path}`).join(', ') : '')
    || (s.action ? `${s.action.tool}${s.action.arguments !== undefined ? ` ${head(typeof s.action.arguments === 'string' ? s.action.arguments : safeJson(s.action.arguments, HEAD_CHARS))}` : ''}` : '')
    || head(s.observation?.text) || head(s.errors?.join('; '));
  const line = pick.replace(/\s+/g, ' ').trim();
  return line.length > ROW_TEXT_CHARS ? `${line.slice(0, ROW_TEXT_CHARS - 1)}…` : line;
}

/** `{"a":1,"b":"x"}` → `a: 1 · b: x` (strings unquoted, nested values as JSON); '' when `t` is no short JSON object. */
export function readableJson(t: string | undefined): string {
  if (!t || t.length > 20_000 || t[0] !== '{') return '';
  let v: unknown;
  try { v = JSON.parse(t); } catch { return ''; }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return '';
  return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}: ${typeof x === 'string' ? x : safeJson(x, HEAD_CHARS)}`).join(' · ').slice(0, HEAD_CHARS);
}

/** Characters of a candidate text {@link shortText} reads (a row shows {@link ROW_TEXT_CHARS}). */
const HEAD_CHARS = ROW_TEXT_CHARS + 80;

function set(xs: readonly string[] | undefined): Set<string> | undefined {
  return xs && xs.length ? new Set(xs) : undefined;
}

function safeJson(v: unknown, max = Infinity): string {
  // a short form of a large object: its first members only
  if (max !== Infinity && v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const parts: string[] = [];
    let n = 0;
    for (const k of Object.keys(o)) {
      const x = o[k];
      const t = `${JSON.stringify(k)}:${typeof x === 'string' ? JSON.stringify(x.slice(0, max)) : safeJson(x)}`;
      parts.push(t); n += t.length;
      if (n > max) break;
    }
    return `{${parts.join(',')}}`;
  }
  try { return JSON.stringify(v) ?? ''; } catch { return String(v); }
}
