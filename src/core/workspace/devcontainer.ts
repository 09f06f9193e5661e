import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { exists } from '../util/fs';
import { errorMessage } from '../util/errors';

/** Options of {@link writeDevcontainer}. */
export interface DevcontainerOptions {
  /** Image tag of the session (for example `expbench/sandbox:1`). */
  image: string;
  taskId: string;
  /**
   * A Dev Container template (JSON; `${expbench.image}` and `${expbench.taskId}` are replaced in
   * its text; its `image` is set to the session's image). Default: `sandbox/devcontainer.template.json`
   * of the package when present, else a minimal configuration.
   */
  template?: string;
  /** True when the source tree already has files under `.devcontainer/`: ours goes to `.devcontainer/expbench/`. */
  treeHasDevcontainer: boolean;
}

/** Where the configuration was written, and the `.git/info/exclude` pattern that keeps it out of the patch. */
export interface WrittenDevcontainer {
  /** Workspace-relative path of devcontainer.json. */
  file: string;
  exclude: string;
}

/** The minimal configuration when no template exists: the image, `/workspace`, user `solver`. */
export function minimalDevcontainer(image: string, taskId: string): Record<string, unknown> {
  return {
    name: `EXP-Bench ${taskId}`,
    image,
    workspaceMount: 'source=${localWorkspaceFolder},target=/workspace,type=bind',
    workspaceFolder: '/workspace',
    remoteUser: 'solver',
    containerUser: 'solver',
    runArgs: ['--label', `expbench.task=${taskId}`, '--label', 'expbench.role=work'],
  };
}

/** `sandbox/devcontainer.template.json` found walking up from this module (works from out/ and dist/). */
export async function findDefaultTemplate(start = __dirname): Promise<string | undefined> {
  let dir = start;
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'sandbox', 'devcontainer.template.json');
    if (await exists(candidate)) return candidate;
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

/**
 * Writes the session's Dev Container configuration into the workspace (`.devcontainer/devcontainer.json`,
 * or `.devcontainer/expbench/devcontainer.json` when the repository has its own `.devcontainer/`).
 *
 * @throws ExpBenchError `BAD_INPUT` naming the template when it is not JSON after substitution.
 */
export async function writeDevcontainer(workspace: string, o: DevcontainerOptions): Promise<WrittenDevcontainer> {
  const rel = o.treeHasDevcontainer ? '.devcontainer/expbench/devcontainer.json' : '.devcontainer/devcontainer.json';
  const template = o.template ?? (await findDefaultTemplate());
  let config: Record<string, unknown>;
  if (template) {
    const text = (await fsp.readFile(template, 'utf8'))
      .split('${expbench.image}').join(o.image)
      .split('${expbench.taskId}').join(o.taskId);
    try {
      config = JSON.parse(text);
    } catch (e) {
      throw new ExpBenchError('BAD_INPUT', template, `Dev Container template is not JSON: ${errorMessage(e)}`, { cause: e });
    }
    config.image = o.image;
  } else {
    config = minimalDevcontainer(o.image, o.taskId);
  }
  const file = path.join(workspace, rel);
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await fsp.writeFile(file, JSON.stringify(config, null, 2) + '\n');
  return { file: rel, exclude: `/${path.posix.dirname(rel)}/` };
}
