/**
 * The field's names of its quantities (pure): which quantity a printed label (`mae`, `val/acc`,
 * `mIoU`, `top1`) or a sentence of a conclusion ("the error falls", "perplexity") names. Used by
 * the claims check's context rule and derived claims (produced.ts, derived.ts) beside the label's
 * own words (a shared word, a prefix, an acronym). Source of the names: the metrics' usual
 * abbreviations in ML papers and their libraries' log keys (scikit-learn's and torchmetrics'
 * metric names, Hugging Face `evaluate`'s: `accuracy`, `f1`, `roc_auc`, `mean_absolute_error`,
 * `perplexity`, `bleu`, `wer`, `mean_iou`).
 *
 * | quantity | a label or a sentence names it by | a sentence also by |
 * | --- | --- | --- |
 * | accuracy | acc, accuracy, top1, top-1, top 1 | |
 * | top-5 accuracy | top5, top-5 | |
 * | mae | mae, mean absolute error, absolute error, l1 error | error |
 * | mse | mse, mean squared error, mean square error, squared error | error |
 * | rmse | rmse, root mean squared error, root mean square error | error |
 * | ece | ece, expected calibration error, calibration error | error, calibration |
 * | nll | nll, negative log likelihood, log likelihood, log loss, cross entropy, xent, ce loss | loss |
 * | f1 | f1, f1 score, f score, f measure | |
 * | auc | auc, auroc, rocauc, roc auc, area under the curve, area under curve | |
 * | perplexity | ppl, perplexity | |
 * | bleu | bleu | |
 * | wer | wer, word error rate | error |
 * | cer | cer, character error rate | error |
 * | iou | iou, miou, mean iou, jaccard, intersection over union | |
 *
 * Words are matched whole, case-insensitively, on the text split at characters other than letters
 * and digits and at camelCase humps (`val/acc`, `test_mae`, `mIoU`: m, iou; `smECE`: sm, ece);
 * `top-1`, `top 1` and `top_1` are read as `top1`. The broader words of the last column count in
 * a sentence only ("the error falls" names mae; a label `error` is its own word), and never inside
 * "standard error", "std error" or "error bar" (uncertainty, not a quantity).
 */

interface Quantity {
  id: string;
  /** Words and phrases (space-separated words) that name it in a label or a sentence. */
  names: string[];
  /** Words that name it in a sentence only. */
  broader?: string[];
}

export const QUANTITIES: readonly Quantity[] = [
  { id: 'accuracy', names: ['acc', 'accuracy', 'accuracies', 'top1'] },
  { id: 'top5', names: ['top5'] },
  { id: 'mae', names: ['mae', 'mean absolute error', 'absolute error', 'l1 error'], broader: ['error', 'errors'] },
  { id: 'mse', names: ['mse', 'mean squared error', 'mean square error', 'squared error'], broader: ['error', 'errors'] },
  { id: 'rmse', names: ['rmse', 'root mean squared error', 'root mean square error'], broader: ['error', 'errors'] },
  { id: 'ece', names: ['ece', 'expected calibration error', 'calibration error'], broader: ['error', 'errors', 'calibration'] },
  { id: 'nll', names: ['nll', 'negative log likelihood', 'log likelihood', 'log loss', 'cross entropy', 'xent', 'ce loss'], broader: ['loss', 'losses'] },
  { id: 'f1', names: ['f1', 'f1 score', 'f score', 'f measure'] },
  { id: 'auc', names: ['auc', 'auroc', 'rocauc', 'roc auc', 'area under the curve', 'area under curve'] },
  { id: 'perplexity', names: ['ppl', 'perplexity', 'perplexities'] },
  { id: 'bleu', names: ['bleu'] },
  { id: 'wer', names: ['wer', 'word error rate'], broader: ['error', 'errors'] },
  { id: 'cer', names: ['cer', 'character error rate'], broader: ['error', 'errors'] },
  { id: 'iou', names: ['iou', 'miou', 'mean iou', 'jaccard', 'intersection over union'] },
];

const PHRASES = QUANTITIES.map((q) => ({ id: q.id, names: q.names.map((n) => n.split(' ')), broader: new Set(q.broader ?? []) }));

/** Uncertainty phrases whose "error" names no quantity. */
const UNCERTAINTY = /\b(?:standard|std\.?)\s+errors?\b|\berror[\s-]+bars?\b/gi;

/**
 * The words of `text` in order, lower-cased: split at characters other than letters and digits and
 * at camelCase humps, `top-1` read as `top1`; each word given once as written and, for a camelCase
 * word, once per hump (`mIoU` → miou, m, iou).
 */
export function quantityWords(text: string): string[] {
  const out: string[] = [];
  const norm = text.replace(/\b(top)[\s_-]?([15])\b/gi, '$1$2');
  for (const raw of norm.split(/[^\p{L}\d]+/u)) {
    if (raw === '') continue;
    out.push(raw.toLowerCase());
    const humps = camelHumps(raw);
    if (humps.length > 1) out.push(...humps);
  }
  return out;
}

const isUpper = (c: string | undefined) => c !== undefined && c >= 'A' && c <= 'Z';
const isLower = (c: string | undefined) => c !== undefined && c >= 'a' && c <= 'z';
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/**
 * `raw` split at its camelCase humps, lower-cased (`mIoU` → m, io, u; `HTMLParser` → html,
 * parser; `smECE` → sm, ece): a new word before a capital that follows a small letter or a digit,
 * and before the last capital of a run of capitals followed by a small letter. One pass (what
 * `/([a-z\d])([A-Z])/g` then `/([A-Z]+)([A-Z][a-z])/g` gave, without their quadratic time on a
 * long run of capitals).
 */
export function camelHumps(raw: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 1; i < raw.length; i++) {
    const c = raw[i];
    const prev = raw[i - 1];
    if (isUpper(c) && (isLower(prev) || isDigit(prev) || (isUpper(prev) && isLower(raw[i + 1])))) {
      out.push(raw.slice(start, i).toLowerCase());
      start = i;
    }
  }
  out.push(raw.slice(start).toLowerCase());
  return out;
}

function hasPhrase(words: string[], phrase: string[]): boolean {
  if (phrase.length === 1) return words.includes(phrase[0]);
  for (let i = 0; i + phrase.length <= words.length; i++) if (phrase.every((w, k) => words[i + k] === w)) return true;
  return false;
}

/**
 * The quantities (ids of {@link QUANTITIES}) that `text` names. `sentence`: `text` is a sentence
 * of a conclusion, so the broader words count too (outside uncertainty phrases).
 */
export function quantitiesOf(text: string, sentence: boolean): Set<string> {
  const words = quantityWords(sentence ? text.replace(UNCERTAINTY, ' ') : text);
  const out = new Set<string>();
  for (const q of PHRASES) {
    if (q.names.some((p) => hasPhrase(words, p)) || (sentence && words.some((w) => q.broader.has(w)))) out.add(q.id);
  }
  return out;
}

/**
 * Words of a label that make it a measured result rather than a setting of the run (besides every
 * quantity of {@link QUANTITIES}): a line's other measured values differ from line to line with
 * any change at all, replicates included, so they never tell two conditions apart (derived.ts).
 */
const MEASURE_WORDS = new Set(['loss', 'losses', 'error', 'errors', 'err', 'score', 'scores', 'reward', 'rewards', 'return', 'returns',
  'precision', 'recall', 'time', 'duration', 'latency', 'throughput', 'speed', 'memory', 'mem', 'elapsed', 'runtime', 'psnr', 'ssim',
  'fid', 'lpips', 'r2', 'corr', 'correlation', 'spearman', 'pearson', 'kl', 'entropy', 'likelihood', 'rate', 'ratio']);

/** True when a label names a measured result (a quantity of the table or a measure word), not a setting such as `n`, `lr`, `epoch`. */
export function isMeasure(label: string): boolean {
  return quantitiesOf(label, false).size > 0 || quantityWords(label).some((w) => MEASURE_WORDS.has(w));
}
