/** Small readers of untrusted JSON values, shared by the importers (never throw). */
import type { StepReasoning } from '../steps/step';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}
export function obj(v: unknown): Obj | undefined { return isObj(v) ? v : undefined; }
export function arr(v: unknown): unknown[] | undefined { return Array.isArray(v) ? v : undefined; }
export function str(v: unknown): string | undefined { return typeof v === 'string' ? v : undefined; }
export function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?(e[+-]?\d+)?\s*$/i.test(v)) return Number(v);
  return undefined;
}

/** A count (tokens, calls) or an amount (USD): a finite number ≥ 0, else undefined (a log's negative count is none). */
export function count(v: unknown): number | undefined {
  const n = num(v);
  return n !== undefined && n >= 0 ? n : undefined;
}

/** An exit code from a number: its integer part when that is a safe integer, else undefined (a log's 1e300 is no exit code). */
export function exitCodeOf(v: unknown): number | undefined {
  const n = num(v);
  if (n === undefined) return undefined;
  const t = Math.trunc(n);
  return Number.isSafeInteger(t) ? t : undefined;
}

/** RFC 6901 pointer from parts (`~` → `~0`, `/` → `~1`). */
export function ptr(...parts: Array<string | number>): string {
  return parts.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/**
 * A time in Unix epoch ms from an ISO 8601 string (no zone = UTC) or a number of seconds
 * (< 1e11) or milliseconds; undefined when absent or unreadable.
 */
export function timeMs(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v < 1e11 ? v * 1000 : v;
  if (typeof v !== 'string' || v.length < 8) return undefined;
  const s = /[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : `${v}Z`;
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? ms : undefined;
}

/** `{ms, relMs: 0}` for a step, with a duration when both ends are known. */
export function stepTime(start: unknown, end?: unknown, durationSec?: unknown): { ms: number; relMs: number; durationMs?: number } | undefined {
  const ms = timeMs(start);
  if (ms === undefined) return undefined;
  const e = timeMs(end);
  const d = num(durationSec);
  const durationMs = e !== undefined && e >= ms ? e - ms : d !== undefined && d >= 0 ? d * 1000 : undefined;
  return durationMs !== undefined ? { ms, relMs: 0, durationMs } : { ms, relMs: 0 };
}

/** Fields of `o` not in `known`, or undefined when there are none. */
export function extra(o: Obj, known: ReadonlySet<string>): Obj | undefined {
  let out: Obj | undefined;
  for (const k of Object.keys(o)) if (!known.has(k)) (out ??= {})[k] = o[k];
  return out;
}

/** Text of a chat message content: a string, or the text/reasoning parts of a content list. */
export function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    return c.map((p) => {
      if (typeof p === 'string') return p;
      const o = obj(p);
      if (!o) return '';
      // Inspect's ContentReasoning: with `redacted` set, `reasoning` is the provider's encrypted
      // blob (not text for a person); its readable part, when any, is `summary`.
      if (o.type === 'reasoning' && o.redacted === true) {
        const summary = str(o.summary);
        return summary ? `[reasoning summary] ${summary}` : '[reasoning: redacted by the provider]';
      }
      return str(o.text) ?? str(o.reasoning) ?? str(o.content) ?? (o.type ? `[${String(o.type)}]` : '');
    }).filter((s) => s !== '').join('\n');
  }
  const o = obj(c);
  if (o) return str(o.text) ?? str(o.content) ?? JSON.stringify(o);
  return c === undefined || c === null ? '' : String(c);
}

/** A model message's content split into the reply and the reasoning (see {@link StepReasoning}). */
export interface SplitContent { text: string; reasoning?: StepReasoning }

/**
 * Splits a chat message content into the reply text and the reasoning: Inspect's
 * `ContentReasoning` parts (`{type: "reasoning", reasoning, summary?, redacted}`: with `redacted`
 * set, `reasoning` is the provider's encrypted blob, never text for a person), Anthropic's
 * `thinking` / `redacted_thinking` blocks; every other part as {@link contentText} reads it.
 */
export function splitContent(c: unknown): SplitContent {
  if (!Array.isArray(c)) return { text: contentText(c) };
  const text: string[] = []; const thoughts: string[] = []; const summaries: string[] = [];
  let redacted = false; let any = false;
  for (const p of c) {
    const o = obj(p);
    const type = str(o?.type);
    if (o && type === 'reasoning') {
      any = true;
      const summary = str(o.summary);
      if (summary) summaries.push(summary);
      if (o.redacted === true) redacted = true;
      else if (str(o.reasoning)) thoughts.push(str(o.reasoning)!);
    } else if (o && type === 'thinking') { any = true; if (str(o.thinking)) thoughts.push(str(o.thinking)!); } else if (o && type === 'redacted_thinking') { any = true; redacted = true; } else {
      const t = contentText([p]);
      if (t) text.push(t);
    }
  }
  if (!any) return { text: text.join('\n') };
  return { text: text.join('\n'), reasoning: reasoningOf(thoughts.join('\n\n'), summaries.join('\n\n'), redacted) };
}

/** A reasoning record from its parts, or undefined when all are empty. */
export function reasoningOf(text: string | undefined, summary?: string, redacted = false): StepReasoning | undefined {
  if (!text && !summary && !redacted) return undefined;
  return { ...(text ? { text } : {}), ...(summary ? { summary } : {}), ...(redacted ? { redacted: true } : {}) };
}

/**
 * A reply whose reasoning is inline (`<think>…</think>`, as reasoning models served through an
 * OpenAI-style API write it) split from it: the blocks leave the text and become the reasoning,
 * unless `reasoning` already holds them.
 */
export function splitThink(text: string, reasoning?: StepReasoning): { text: string; reasoning?: StepReasoning } {
  if (!text.includes('<think>')) return { text, ...(reasoning ? { reasoning } : {}) };
  const blocks: string[] = [];
  const rest = text.replace(/<think>([\s\S]*?)(?:<\/think>|$)/g, (_m, inner: string) => { blocks.push(inner.trim()); return ''; }).trim();
  const inline = blocks.filter(Boolean).join('\n\n');
  if (reasoning?.text || reasoning?.redacted) return { text: rest, reasoning };
  return { text: rest, ...(inline ? { reasoning: { ...(reasoning ?? {}), text: inline } } : reasoning ? { reasoning } : {}) };
}

/** A value shown as text: strings as they are, anything else as JSON. */
export function asText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return '';
  try { return JSON.stringify(v); } catch { return String(v); }
}

/** The shell command in tool arguments (`cmd`, then `command` unless the tool is a file editor). */
export function commandOf(tool: string, args: unknown): string | undefined {
  const a = obj(args);
  if (!a) return undefined;
  if (typeof a.cmd === 'string') return a.cmd;
  if (typeof a.command === 'string' && !/edit/i.test(tool)) return a.command;
  return undefined;
}

/** File edits from editor-tool arguments (`path` + `file_text` / `old_str` / `new_str`), else undefined. */
export function editsOf(tool: string, args: unknown): Array<{ path: string; op?: string; before?: string; after?: string }> | undefined {
  const a = obj(args);
  if (!a || !/edit|write|create|replace|insert/i.test(tool + ' ' + String(a.command ?? ''))) return undefined;
  const path = str(a.path) ?? str(a.file) ?? str(a.file_path) ?? str(a.filename);
  if (!path) return undefined;
  const op = str(a.command) ?? str(a.action);
  if (op === 'view' || op === 'undo_edit') return undefined;
  const after = str(a.file_text) ?? str(a.new_str) ?? str(a.content) ?? str(a.text);
  const before = str(a.old_str);
  if (after === undefined && before === undefined && op !== 'create') return undefined;
  return [{ path, ...(op ? { op } : {}), ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) }];
}
