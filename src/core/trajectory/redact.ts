/**
 * Secrets in imported logs, replaced on import by `[REDACTED:<kind>]` in everything a trajectory
 * stores and shows (step text, arguments, observations, extra fields, metadata, scores, patch).
 *
 * What counts as a secret (docs/steps.md, "Secrets"):
 * - OpenAI/Anthropic-style keys `sk-…` (`sk-proj-…`, `sk-ant-…`), 20+ characters after `sk-`;
 * - `Bearer <token>` (8+ token characters);
 * - GitHub tokens `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` (20+ characters) and `github_pat_…`;
 * - AWS access key ids `AKIA…` / `ASIA…` (16 upper-case characters after the prefix);
 * - assignments in environment dumps and configs: `NAME=value` / `NAME: value` / `"name": "value"`
 *   where NAME ends in API_KEY, APIKEY, TOKEN, SECRET, SECRET_KEY, SECRET_ACCESS_KEY, PASSWORD or
 *   ACCESS_KEY (any case): the value is replaced, the name kept;
 * - in objects, a string value under such a key (`api_key`, `aws_secret_access_key`, `password`).
 * Values that are already masked (`*****`, `<secret-hidden>`, `None`, `null`, empty) are left alone.
 */

const KEY_NAME = String.raw`(?:[A-Za-z_][A-Za-z0-9_.-]*?)?(?:API_?KEY|TOKEN|SECRET(?:_ACCESS)?(?:_KEY)?|PASSWORD|ACCESS_KEY)`;
const ENV_NAME = String.raw`(?:[A-Z][A-Z0-9_]*_)?(?:API_?KEY|TOKEN|SECRET(?:_ACCESS)?(?:_KEY)?|PASSWORD|ACCESS_KEY)`;
/**
 * `re` finds a candidate; `keep` is the group kept before `[REDACTED:kind]` (the name); `value`,
 * when given, must match the value (group 2) for it to count as a secret.
 */
const PATTERNS: Array<{ kind: string; re: RegExp; keep?: number; value?: RegExp }> = [
  // environment dumps: OPENAI_API_KEY=…, "GITHUB_TOKEN": "…" (upper-case names only: code's `token = x` is not a secret)
  { kind: 'secret', re: new RegExp(String.raw`(\b${ENV_NAME}\b["']?\s*[=:]\s*["']?)([^\s"']{4,})`, 'g'), keep: 1 },
  // any-case names with a quoted value: api_key = "…", "password": "…"
  { kind: 'secret', re: new RegExp(String.raw`(\b(?:[A-Za-z][A-Za-z0-9_]*[_-])?(?:api[_-]?key|token|secret|password|access[_-]?key)["']?\s*[=:]\s*["'])([^"'\s]{8,})(?=["'])`, 'gi'), keep: 1 },
  // prose: "Password: hunter22" (a value with a digit: checked on the whole word, WITH_DIGIT; a
  // pattern `[^\s"'\d]*\d` scanned the rest of a long word from every `password=` in it: quadratic)
  { kind: 'secret', re: /(\b(?:password|passwd)\s*[=:]\s*)([^\s"']+)/gi, keep: 1, value: /\d/ },
  { kind: 'bearer', re: /(\bBearer\s+)([A-Za-z0-9._~+/=-]{8,})/g, keep: 1 },
  { kind: 'api-key', re: /\bsk-[A-Za-z0-9_-]{20,}/g },
  { kind: 'github-token', re: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g },
  { kind: 'aws-key', re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
];
/** Cheap pre-check: a string without any of these cannot hold a secret. */
const HINT = /sk-|bearer|gh[pousr]_|github_pat_|AKIA|ASIA|key|token|secret|password/i;
const SECRET_KEY = new RegExp(String.raw`^${KEY_NAME}$`, 'i');
const MASKED = /^(?:\*+|<secret-hidden>|none|null|undefined|\[REDACTED(?::[a-z-]+)?\]|)$/i;
/** Words that follow `token:` in prose and are not secrets. */
const NOT_A_VALUE = /^(?:\*+|<secret-hidden>|none|null|undefined|true|false|\[REDACTED.*|\$\{?[A-Za-z_]+\}?|<[^>]*>|[0-9]{1,6}|count|usage|limit|limits|ids?|type|name|value|string|number)$/i;

/** `s` with secrets replaced, and how many were. */
export function redactString(s: string): { text: string; count: number } {
  if (s.length < 8 || !HINT.test(s)) return { text: s, count: 0 };
  let count = 0;
  let text = s;
  for (const p of PATTERNS) {
    text = text.replace(p.re, (...m: string[]) => {
      if (p.keep) {
        const value = m[2];
        if (NOT_A_VALUE.test(value) || (p.value && !p.value.test(value))) return m[0];
        count++;
        return `${m[1]}[REDACTED:${p.kind}]`;
      }
      count++;
      return `[REDACTED:${p.kind}]`;
    });
  }
  return { text, count };
}

const LONE_SRC = String.raw`[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]`;
const LONE = new RegExp(LONE_SRC);
const LONE_G = new RegExp(LONE_SRC, 'g');

const SURROGATE = /[\uD800-\uDFFF]/;
const NEEDS_WORK = new RegExp(`[\\uD800-\\uDFFF]|${HINT.source}`, 'i');

/** Counts replacements while values are redacted and made well-formed (lone surrogates → U+FFFD). */
export class Sanitizer {
  redactions = 0;
  /** Strings that held a lone surrogate (UTF-16 half without its pair). */
  loneSurrogates = 0;

  string(s: string): string {
    // one scan decides whether the string needs any work (most do not)
    if (s.length < 8 ? !SURROGATE.test(s) : !NEEDS_WORK.test(s)) return s;
    let t = s;
    if (LONE.test(t)) { this.loneSurrogates++; t = t.replace(LONE_G, '\uFFFD'); }
    const r = redactString(t);
    this.redactions += r.count;
    return r.text;
  }

  /**
   * `v` with every string sanitised, changed IN PLACE (arrays and objects are rewritten where a
   * string changes; the importers own the parsed values); a string under a secret-named key is
   * replaced whole. A value reached twice is not counted twice (a redacted string is not redacted again).
   */
  value<T>(v: T, key?: string): T {
    if (typeof v === 'string') {
      if (key && SECRET_KEY.test(key) && !MASKED.test(v.trim())) { this.redactions++; return '[REDACTED:secret]' as T; }
      return this.string(v) as T;
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) { const x = v[i]; if (x !== null && typeof x !== 'number' && typeof x !== 'boolean') { const y = this.value(x); if (y !== x) v[i] = y; } }
      return v;
    }
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      for (const k in o) { const x = o[k]; if (x !== null && typeof x !== 'number' && typeof x !== 'boolean') { const y = this.value(x, k); if (y !== x) o[k] = y; } }
      return v;
    }
    return v;
  }
}
