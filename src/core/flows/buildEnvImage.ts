import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { curationFileFor, readCurationFile } from '../curation';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { packageRoot } from '../paths';
import { connectDocker, inspectImage } from '../sandbox';
import type { Task } from '../tasks/types';

const logger = log('env.build');

/** What {@link buildEnvironmentImage} did. */
export interface EnvImageBuild {
  image: string;
  /** The curation file the image and packages came from. */
  curationFile: string;
  packages: string[];
  /** True when build-env.sh ran (the image was missing, or `force`); false: it was present. */
  built: boolean;
  /** build-env.sh's output lines (empty when it did not run). */
  output: string[];
}

/**
 * Builds a task's environment image from its paper's curation file on request (issue 31, item 4;
 * docs/curation.md "A paper's environment image"): `environment.baseImage` is the tag,
 * `environment.debianPackages` the packages, and `bash sandbox/build-env.sh --tag IMAGE PKG…` (this
 * package's own script: FROM expbench/sandbox:1, apt through the host's network, cached by labels)
 * builds it when the engine lacks it, or always with `force`.
 * @throws ExpBenchError `BAD_INPUT` naming the curation file when there is none, it is not valid,
 *   or it names no baseImage or no debianPackages; `DOCKER_UNAVAILABLE` without an engine;
 *   `IMAGE_MISSING` naming the image when build-env.sh fails (its last lines quoted); `CANCELLED`
 */
export async function buildEnvironmentImage(o: { task: Task; force?: boolean; docker?: Docker; onLine?: (line: string) => void; signal?: AbortSignal }): Promise<EnvImageBuild> {
  const file = curationFileFor(o.task.file);
  const read = await readCurationFile(file, `${o.task.conference}/${o.task.paperId}`);
  if (!read) throw new ExpBenchError('BAD_INPUT', file, `there is no curation file for ${o.task.id}: write one with environment.baseImage and environment.debianPackages (docs/curation.md)`);
  if (!read.curation) throw new ExpBenchError('BAD_INPUT', file, `is not a valid curation file: ${read.problems.slice(0, 3).map((p) => `${p.pointer || '/'}: ${p.message}`).join('; ')}`);
  const env = read.curation.environment;
  const image = env?.baseImage;
  if (!image) throw new ExpBenchError('BAD_INPUT', `${file}#/environment/baseImage`, 'names no image to build');
  const packages = env?.debianPackages ?? [];
  if (packages.length === 0) throw new ExpBenchError('BAD_INPUT', `${file}#/environment/debianPackages`, `lists no Debian package to build ${image} from${env?.dockerfile ? ' (its dockerfile needs network: docker build by hand)' : ''}`);
  const docker = o.docker ?? connectDocker();
  const present = (await inspectImage(docker, image)) !== undefined;
  if (present && !o.force) return { image, curationFile: file, packages, built: false, output: [] };
  const script = path.join(packageRoot(), 'sandbox', 'build-env.sh');
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('bash', [script, '--tag', image, ...(o.force ? ['--force'] : []), ...packages], { stdio: ['ignore', 'pipe', 'pipe'] });
    const onAbort = () => child.kill('SIGTERM');
    o.signal?.addEventListener('abort', onAbort, { once: true });
    let rest = '';
    const take = (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) { output.push(l); if (output.length > 2000) output.shift(); o.onLine?.(l); }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (c) => { o.signal?.removeEventListener('abort', onAbort); if (rest) { output.push(rest); o.onLine?.(rest); } resolve(c); });
  });
  if (o.signal?.aborted) throw new ExpBenchError('CANCELLED', image, 'the image build was cancelled');
  if (code !== 0) throw new ExpBenchError('IMAGE_MISSING', image, `sandbox/build-env.sh exited ${code}; its output ends:\n${output.slice(-8).join('\n')}`);
  logger.info(`built ${image} from ${file} (${packages.join(' ')})`);
  return { image, curationFile: file, packages, built: true, output };
}
