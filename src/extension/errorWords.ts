import { isExpBenchError } from '../core/errors';
import { errorMessage } from '../core/util/errors';

/**
 * An error as a sentence for a notification: no command line. A git failure's
 * "git <args> failed (exit N): <stderr>" becomes git's own `fatal:`/`error:` lines (or its last
 * stderr line); a `SOURCE_UNAVAILABLE` error says which repository could not be fetched. The full
 * message, command line included, belongs in the log.
 */
export function errorInWords(e: unknown): string {
  const full = errorMessage(e);
  const git = /\bgit .*? failed \(exit (\d+)\):\s*([\s\S]*)$/.exec(full);
  let text = full;
  if (git) {
    const lines = git[2].split('\n').map((l) => l.trim()).filter(Boolean);
    const said = lines.filter((l) => /^(fatal|error):/i.test(l)).map((l) => l.replace(/^(fatal|error):\s*/i, ''));
    const reason = (said.length ? said : lines.slice(-1)).join('; ') || `git exited with status ${git[1]}`;
    text = `${full.slice(0, git.index).replace(/[:\s]+$/, '')}${full.slice(0, git.index).trim() ? ': ' : ''}${reason}`;
  }
  if (isExpBenchError(e, 'SOURCE_UNAVAILABLE')) {
    const rest = text.startsWith(`${e.input}: `) ? text.slice(e.input.length + 2) : text;
    return `the repository ${e.input} could not be fetched (${rest.replace(/^cannot (clone|fetch):?\s*/, '')})`;
  }
  return text;
}
