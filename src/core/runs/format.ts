/**
 * Formatting of the board's figures, shared by the terminal board (src/cli/runsBoard.ts) and the
 * VS Code board (webview-ui/src/runs/): pure, no imports, so the webview bundle can take it.
 */

/** `0:42`, `1:02:03` from ms; `-` for null. */
export function clock(ms: number | null): string {
  if (ms === null) return '-';
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** `812`, `3.1k`, `1.2M` tokens; `-` for null. */
export function tokenCount(n: number | null): string {
  if (n === null) return '-';
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** USD with four decimals; `-` for null (a model without a price). */
export function usd(n: number | null): string {
  return n === null ? '-' : n.toFixed(4);
}

/** ✓ / ✖ / · (not computable). */
export function flag(v: boolean | null): string {
  return v === null ? '·' : v ? '✓' : '✖';
}
