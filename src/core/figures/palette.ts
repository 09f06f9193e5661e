/**
 * Colours of the figures. Series: the Okabe–Ito palette (Okabe & Ito 2008, "Color Universal
 * Design"), distinguishable with the common colour-vision deficiencies; yellow last (weak on
 * white). Heat maps: ColorBrewer's sequential "Blues" (9 classes), one hue light to dark, which
 * reads the same for colour-blind readers and in greyscale print.
 */
export const OKABE_ITO = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#000000', '#F0E442'] as const;

/** The failure breakdown's colours; the categories drawn apart are greys (hatched where drawn). */
export const FAILURE_COLOURS: Record<string, string> = {
  'zeroed by the monitor': '#CC79A7',
  'failed first at D': '#D55E00',
  'failed first at C': '#E69F00',
  'failed first at I': '#F0E442',
  'failed first at E': '#56B4E9',
  'all correct (All·E✓)': '#009E73',
  'harness error': '#7F7F7F',
  'not computable': '#BFBFBF',
  'invalid task': '#4D4D4D',
};

const BLUES = ['#f7fbff', '#deebf7', '#c6dbef', '#9ecae1', '#6baed6', '#4292c6', '#2171b5', '#08519c', '#08306b'];

/** The heat-map colour of a rate 0..1 (linear between the 9 classes of "Blues"). */
export function heatColour(v: number): string {
  const x = Math.min(1, Math.max(0, v)) * (BLUES.length - 1);
  const i = Math.min(BLUES.length - 2, Math.floor(x));
  const t = x - i;
  const a = hex(BLUES[i]);
  const b = hex(BLUES[i + 1]);
  return `#${a.map((c, j) => Math.round(c + (b[j] - c) * t).toString(16).padStart(2, '0')).join('')}`;
}

/** Black or white text, whichever reads on the heat colour of `v`. */
export function heatText(v: number): string {
  return v > 0.55 ? '#ffffff' : '#000000';
}

/** The heat ramp's classes, light to dark (legends). */
export const HEAT_STOPS: readonly string[] = BLUES;

function hex(c: string): number[] {
  return [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
}

/** The series colour of the i-th series (cycling). */
export function seriesColour(i: number): string {
  return OKABE_ITO[i % OKABE_ITO.length];
}
