import { execFile, spawn } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';

/** The repository root (the tests run from out/test/unit). */
export const ROOT = path.resolve(__dirname, '../../..');
/** The bundled CLI the README runs (`npm run build`; scripts/test.sh builds it before the unit tier). */
export const CLI = path.join(ROOT, 'dist', 'cli.js');
/** An environment without judge or agent endpoints and without dataset folders (the heuristic judge runs offline). */
export const OFFLINE_ENV: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_JUDGE_|EXPBENCH_AGENT_|EXPBENCH_DATASETS$)/.test(k)));

export interface CliResult { code: number; stdout: string; stderr: string }

/** Runs `node dist/cli.js …args` in the repository root; resolves with its exit code and output. */
export function cli(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, env: opts.env ?? OFFLINE_ENV, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/**
 * Runs the CLI with its stdout into a pipe whose reader closes after the first chunk
 * (`expbench … | head -c N`); resolves with the exit code, the signal and stderr.
 */
export function cliIntoClosedPipe(args: string[], env: NodeJS.ProcessEnv = OFFLINE_ENV): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; bytesRead: number }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let bytesRead = 0;
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString('utf8'); });
    child.stdout.once('data', (d: Buffer) => { bytesRead = d.length; child.stdout.destroy(); });
    child.on('close', (code, signal) => resolve({ code, signal, stderr, bytesRead }));
  });
}

/** A local TCP port with nothing listening on it (bound, then released). */
export async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
