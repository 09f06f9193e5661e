import type { LintFinding } from './record';

/**
 * Lint of `reproduce_exp_bench.sh` before it runs (pure). The reference harness accepts any
 * script that exits 0, so a script that prints precomputed numbers, or only `exit 0`, passes E
 * there (docs/exp-bench-harness.md, "Known weaknesses"). These findings flag such scripts; they
 * are warnings in the record and never stop the run.
 *
 * Rules (`rule` ids):
 * - `script-missing`: no `reproduce_exp_bench.sh` at the repository root.
 * - `script-empty`: only blank lines, comments and a shebang.
 * - `exit-only`: nothing but `exit`/`true`/`:`/`set` commands.
 * - `echo-only`: no program is invoked (only the shell's `echo`, `printf`, `cat` and trivial
 *   builtins) and numbers are printed: the results are written in the script, not computed.
 *   Reported at the first line that prints a number.
 */

/** Commands that print, or do nothing worth calling an experiment. */
const PRINTERS = new Set(['echo', 'printf', 'cat']);
const TRIVIAL = new Set([
  'exit', 'true', 'false', ':', 'set', 'export', 'cd', 'pwd', 'sleep', 'return', 'shopt', 'trap', 'unset',
  'local', 'declare', 'readonly', 'mkdir', 'test', '[', '[[', 'umask', 'wait', 'tee',
]);
const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'for', 'while', 'until', 'do', 'done', 'case', 'esac', 'in', '{', '}', '!', 'function', 'time']);

interface Command { word: string; line: number; text: string }

/** Splits a shell script into simple commands (first word + line), skipping heredoc bodies. */
function commands(script: string): { cmds: Command[]; heredocs: Array<{ cmd: Command; body: string }> } {
  const cmds: Command[] = [];
  const heredocs: Array<{ cmd: Command; body: string }> = [];
  const lines = script.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    const line = raw.replace(/(^|\s)#.*$/, '');
    if (line.trim() === '') continue;
    const lineCmds: Command[] = [];
    for (const part of line.split(/;|&&|\|\||\||&|\$\(|`|\(|\)/)) {
      const words = part.trim().split(/\s+/).filter((w) => w !== '');
      while (words.length > 0 && (KEYWORDS.has(words[0]) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]))) words.shift();
      if (words.length === 0) continue;
      const word = words[0].replace(/^["']|["']$/g, '').split('/').pop() ?? words[0];
      lineCmds.push({ word, line: i + 1, text: part.trim() });
    }
    cmds.push(...lineCmds);
    const hd = /<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1/.exec(line);
    if (hd) {
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length && lines[j].trim() !== hd[2]; j++) body.push(lines[j]);
      const owner = lineCmds.find((c) => c.text.includes('<<')) ?? lineCmds[0];
      if (owner) heredocs.push({ cmd: owner, body: body.join('\n') });
      i = j;
    }
  }
  return { cmds, heredocs };
}

const HAS_NUMBER = /\d+(?:\.\d+)?/;

/**
 * Lints the script text; `undefined` means the file does not exist.
 * @returns findings, all with severity `warning`.
 */
export function lintScript(script: string | undefined): LintFinding[] {
  if (script === undefined) {
    return [{ severity: 'warning', rule: 'script-missing', message: 'reproduce_exp_bench.sh is missing at the repository root' }];
  }
  const { cmds, heredocs } = commands(script);
  if (cmds.length === 0) {
    return [{ severity: 'warning', rule: 'script-empty', message: 'reproduce_exp_bench.sh has no commands (only blank lines or comments)' }];
  }
  const programs = cmds.filter((c) => !PRINTERS.has(c.word) && !TRIVIAL.has(c.word));
  if (programs.length > 0) return [];
  const printers = cmds.filter((c) => PRINTERS.has(c.word));
  if (printers.length === 0) {
    return [{ severity: 'warning', rule: 'exit-only', message: 'reproduce_exp_bench.sh runs nothing (only exit/true/set and similar builtins): an exit code of 0 proves nothing', line: cmds[0].line }];
  }
  const printing = printers.find((c) => HAS_NUMBER.test(c.text.replace(/^\S+/, '')))
    ?? heredocs.find((h) => PRINTERS.has(h.cmd.word) && HAS_NUMBER.test(h.body))?.cmd;
  if (printing) {
    return [{
      severity: 'warning', rule: 'echo-only', line: printing.line,
      message: `reproduce_exp_bench.sh prints numbers with ${printing.word} but runs no program (no python or other command): the results are written in the script, not computed`,
    }];
  }
  const catFile = printers.find((c) => c.word === 'cat' && c.text.split(/\s+/).length > 1 && !c.text.includes('<<'));
  if (catFile) {
    return [{ severity: 'warning', rule: 'echo-only', line: catFile.line, message: `reproduce_exp_bench.sh only prints files (${catFile.text}) and runs no program: the results are not computed by the run` }];
  }
  return [{ severity: 'warning', rule: 'exit-only', message: 'reproduce_exp_bench.sh runs no program (only echo/printf/cat and builtins)', line: cmds[0].line }];
}
