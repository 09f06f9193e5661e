import type { Stage } from '../steps/step';
import { obj, str } from './json';
import type { TrajSpan } from './types';

/**
 * The span tree of one Inspect sample's events (inspect_ai `util/_span.py`: `span_begin {id,
 * parent_id, type, name}` … `span_end {id}`; every event carries the `span_id` it ran in), read
 * the way Inspect's own viewer reads it (`transcript/transform/treeify.ts`, `event/_timeline.py`):
 *
 * - top-level spans `init` (the sample's setup), `solvers` (the agent) and `scorers` (scoring);
 *   a top-level span after `solvers` ended is cleanup, one before it setup. Score events outside
 *   any `scorers` span are scoring (Inspect injects a `scorers` span around them);
 * - inside `solvers`, a solver span that holds no model call is setup when it runs before the
 *   first model call and cleanup after the last (a task's `setup` solvers, a teardown solver);
 * - a `tool` span belongs to the tool event that ran in it: the event inside it, or (older logs,
 *   where the tool event carries its caller's span) the tool event of the same function whose span
 *   is the tool span's parent, nearest in order. Sandbox events in a tool span are that tool
 *   call's (Inspect's `unwrap_tools` elevates the tool event over its span the same way).
 */
export interface SpanTree {
  spans: Map<string, TrajSpan>;
  /** Tool event index → its tool span id. */
  toolSpanOf: Map<number, string>;
  /** Tool span id → the tool event index that owns it. */
  ownerOf: Map<string, number>;
  /** The stage of an event at index `i` (undefined: the agent's work). */
  stageOf(i: number): Stage | undefined;
  /** The span a step of event `i` is shown in: its own, or for a tool event the parent of its tool span; undefined at top level. */
  shownSpan(i: number): string | undefined;
  /** The nearest tool span at or above `spanId` that a tool event owns. */
  owningToolSpan(spanId: string | undefined): string | undefined;
}

export function spanTree(events: unknown[]): SpanTree {
  const spans = new Map<string, TrajSpan>();
  const order: string[] = [];
  const ended = new Map<string, number>();
  const begun = new Map<string, number>();
  const hasModel = new Set<string>();
  const modelAt: number[] = [];
  const ev = events.map((x) => obj(x));
  ev.forEach((e, i) => {
    if (!e) return;
    const kind = str(e.event);
    if (kind === 'span_begin') {
      const id = str(e.id);
      if (!id || spans.has(id)) return;
      const parent = str(e.parent_id) ?? undefined;
      const depth = parent && spans.has(parent) ? spans.get(parent)!.depth + 1 : 0;
      spans.set(id, { id, name: str(e.name) ?? '(span)', ...(str(e.type) ? { type: str(e.type) } : {}), ...(parent && spans.has(parent) ? { parent } : {}), depth });
      order.push(id); begun.set(id, i);
    } else if (kind === 'span_end') {
      const id = str(e.id);
      if (id) ended.set(id, i);
    } else if (kind === 'model') {
      modelAt.push(i);
      for (let s = str(e.span_id); s && !hasModel.has(s); s = spans.get(s)?.parent) hasModel.add(s);
    }
  });
  // stages: top-level phase spans, then setup/cleanup solvers inside `solvers`
  const solvers = order.map((id) => spans.get(id)!).find((s) => s.depth === 0 && (s.type === 'solvers' || s.name === 'solvers'));
  const solversStart = solvers ? begun.get(solvers.id)! : -1;
  const solversEnd = solvers ? (ended.get(solvers.id) ?? events.length) : -1;
  const firstModel = modelAt.length ? modelAt[0] : Infinity;
  const lastModel = modelAt.length ? modelAt[modelAt.length - 1] : -Infinity;
  for (const id of order) {
    const s = spans.get(id)!;
    if (s.depth === 0) {
      const name = s.type ?? s.name;
      if (name === 'init' || s.name === 'init') s.stage = 'setup';
      else if (name === 'scorers' || name === 'scorer' || s.name === 'scorers') s.stage = 'scoring';
      else if (solvers && s !== solvers) s.stage = begun.get(id)! > solversStart ? 'cleanup' : 'setup';
    } else if (solvers && s.parent === solvers.id && s.type === 'solver' && !hasModel.has(id)) {
      if (begun.get(id)! < firstModel) s.stage = 'setup';
      else if (begun.get(id)! > lastModel) s.stage = 'cleanup';
    } else if (s.type === 'scorer' || s.type === 'scorers') s.stage = 'scoring';
  }
  // a span's stage is its own or its nearest ancestor's (found once per span)
  const stages = new Map<string, Stage | undefined>();
  const stageOfSpan = (id: string | undefined): Stage | undefined => {
    // iterative: a hostile log may nest spans very deep
    const walked: string[] = [];
    let st: Stage | undefined;
    for (let s = id ? spans.get(id) : undefined; s; s = s.parent ? spans.get(s.parent) : undefined) {
      if (stages.has(s.id)) { st = stages.get(s.id); break; }
      walked.push(s.id);
      if (s.stage) { st = s.stage; break; }
    }
    for (const w of walked) stages.set(w, st);
    return st;
  };

  // tool spans and their tool events
  const toolSpanOf = new Map<number, string>();
  const ownerOf = new Map<string, number>();
  const unclaimedSpans: string[] = [];
  const unclaimedTools: number[] = [];
  const matches = (spanId: string, toolIdx: number): boolean => {
    const s = spans.get(spanId)!; const e = ev[toolIdx]!;
    return s.name === str(e.function) && (str(e.span_id) === spanId || str(e.span_id) === s.parent);
  };
  const claim = (spanId: string, toolIdx: number) => { toolSpanOf.set(toolIdx, spanId); ownerOf.set(spanId, toolIdx); };
  ev.forEach((e, i) => {
    if (!e) return;
    const kind = str(e.event);
    if (kind === 'span_begin' && str(e.type) === 'tool' && spans.has(str(e.id) ?? '')) {
      const id = str(e.id)!;
      const k = unclaimedTools.findIndex((t) => matches(id, t));
      if (k >= 0) { claim(id, unclaimedTools[k]); unclaimedTools.splice(k, 1); } else unclaimedSpans.push(id);
    } else if (kind === 'tool') {
      const own = str(e.span_id);
      if (own && spans.get(own)?.type === 'tool' && !ownerOf.has(own) && spans.get(own)!.name === str(e.function)) {
        claim(own, i);
        const k = unclaimedSpans.indexOf(own); if (k >= 0) unclaimedSpans.splice(k, 1);
        return;
      }
      // the nearest unclaimed tool span of this function under the tool event's own span
      for (let k = unclaimedSpans.length - 1; k >= 0; k--) {
        if (matches(unclaimedSpans[k], i)) { claim(unclaimedSpans[k], i); unclaimedSpans.splice(k, 1); return; }
      }
      unclaimedTools.push(i);
    }
  });
  const owningToolSpan = (spanId: string | undefined): string | undefined => {
    let hops = 0;
    for (let s = spanId ? spans.get(spanId) : undefined; s && hops++ < 64; s = s.parent ? spans.get(s.parent) : undefined) {
      if (ownerOf.has(s.id)) return s.id;
      if (s.type !== 'tool' && s.type !== 'sandbox') return undefined; // a sandbox call two spans down (an agent tool) is its own row
    }
    return undefined;
  };
  return {
    spans, toolSpanOf, ownerOf, owningToolSpan,
    stageOf(i) {
      const e = ev[i];
      if (!e) return undefined;
      const st = stageOfSpan(str(e.span_id));
      if (st) return st;
      // older logs: score events without a scorers span are scoring; events after the solvers are cleanup
      const inSpan = spans.has(str(e.span_id) ?? '');
      if (str(e.event) === 'score' && !inSpan) return 'scoring';
      if (solvers && !inSpan && i > solversEnd) return 'cleanup';
      return undefined;
    },
    shownSpan(i) {
      const e = ev[i];
      if (!e) return undefined;
      const t = toolSpanOf.get(i);
      if (t) return spans.get(t)!.parent;
      const sp = str(e.span_id);
      return sp && spans.has(sp) ? sp : undefined;
    },
  };
}
