import * as path from 'node:path';
import type { Command } from 'commander';
import { writeSessionWindow } from '../../core/session/window';
import { printJson } from '../output';

/**
 * `expbench session window-file DIR [--json]`: writes the session's window file (a VS Code
 * workspace file holding its `workspace/`, docs/trust.md) and prints its path, for scripts that
 * open a session in VS Code (`code FILE`; code-server: `?workspace=FILE`), as scripts/start.sh does.
 */
export function registerWindow(session: Command): void {
  session.command('window-file').argument('<dir>', 'session folder (holds workspace/)')
    .option('--json', 'print {"session": DIR, "windowFile": FILE}')
    .description("write the session's VS Code workspace file (Restricted Mode until you trust this session) and print its path")
    .action(async (dir: string, opts: { json?: boolean }) => {
      const root = path.resolve(dir);
      const file = await writeSessionWindow(root);
      if (opts.json) printJson({ session: root, windowFile: file });
      else console.log(file);
    });
}
