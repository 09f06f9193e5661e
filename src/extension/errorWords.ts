import { isExpBenchError } from '../core/errors';
import { errorMessage } from '../core/util/errors';
import { isSpace, trimEndOf } from '../core/untrusted';

/**
 * An error as a sentence for a notification: no command line. A git failure's
 * "git <args> failed (exit N): <stderr>" becomes git's own `fatal:`/`error:` lines (or its last
 * stderr line); a `SOURCE_UNAVAILABLE` error says which repository could not be fetched. The full
 * message, command line included, belongs in the log.
 */
export function errorInWords(e: unknown): string {
  const full = errorMessage(e);
  const git = gitFailure(full);
  let text = full;
  if (git) {
    const lines = git[2].split('\n').map((l) => l.trim()).filter(Boolean);
    const said = lines.filter((l) => /^(fatal|error):/i.test(l)).map((l) => l.replace(/^(fatal|error):\s*/i, ''));
    const reason = (said.length ? said : lines.slice(-1)).join('; ') || `git exited with status ${git[1]}`;
    text = `${trimEndOf(full.slice(0, git.index), (c) => c === ':' || isSpace(c))}${full.slice(0, git.index).trim() ? ': ' : ''}${reason}`;
  }
  if (isExpBenchError(e, 'SOURCE_UNAVAILABLE')) {
    const rest = text.startsWith(`${e.input}: `) ? text.slice(e.input.length + 2) : text;
    return `the repository ${e.input} could not be fetched (${rest.replace(/^cannot (clone|fetch):?\s*/, '')})`;
  }
  return text;
}

/**
 * Where a git failure is told in `full` ("… git <args> failed (exit N): <stderr>"): the index of
 * `git`, the exit status and what follows (spaces first removed). The first line that holds
 * `git ` before ` failed (exit N):` is taken, as `/\bgit .*? failed \(exit (\d+)\):\s*([\s\S]*)$/`
 * took it, in one pass over each line.
 */
function gitFailure(full: string): { index: number; 1: string; 2: string } | undefined {
  let lineStart = 0;
  for (const line of full.split('\n')) {
    const g = /\bgit /.exec(line);
    if (g) {
      const from = g.index + 4; // after `git `
      const f = / failed \(exit (\d+)\):/.exec(line.slice(from));
      if (f && !/[\r\u2028\u2029]/.test(line.slice(g.index, from + f.index))) {
        const after = lineStart + from + f.index + f[0].length;
        return { index: lineStart + g.index, 1: f[1], 2: full.slice(after).replace(/^\s+/, '') };
      }
    }
    lineStart += line.length + 1;
  }
  return undefined;
}
