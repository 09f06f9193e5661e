/**
 * `n` and the noun in the number English takes: `plural(1, 'file')` → `1 file`,
 * `plural(2, 'file')` → `2 files`, `plural(0, 'file')` → `0 files`. `many` is the plural form when
 * it is not the noun + `s` (`plural(2, 'hunk', 'hunks')`, `plural(3, 'this', 'these')`).
 */
export function plural(n: number, noun: string, many = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : many}`;
}
