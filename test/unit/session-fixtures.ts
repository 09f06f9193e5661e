import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SessionLayout } from '../../src/core/layout';
import { adoptWorkspace } from '../fixtures/hostRepo';

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', ...args], { cwd, encoding: 'utf8' });

/** A session folder whose workspace is a real git repository with one commit, "task start". */
export async function makeSessionFolder(): Promise<SessionLayout> {
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-submit-'));
  const layout = new SessionLayout(root);
  await fsp.mkdir(layout.workspace, { recursive: true });
  await fsp.mkdir(layout.private, { recursive: true });
  await fsp.writeFile(path.join(layout.workspace, 'train.py'), 'import sys\nprint("epoch 1")\n');
  git(layout.workspace, 'init', '-q', '-b', 'main');
  git(layout.workspace, 'add', '-A');
  git(layout.workspace, 'commit', '-q', '-m', 'task start');
  adoptWorkspace(root);
  return layout;
}

