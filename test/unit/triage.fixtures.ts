import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { judgeStep } from '../../src/core/flows/judge';
import { SessionService } from '../../src/core/flows/sessionService';
import { verifyStep } from '../../src/core/flows/verify';
import { SessionLayout } from '../../src/core/layout';
import { writeSessionMarker } from '../../src/core/session/marker';
import { prepareSession } from '../../src/core/workspace/prepare';
import type { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { AGENT_SCRIPT, API_KEY, ROOT, sampleTask, solvingScript, TASK_ID } from './agent.fixtures';

/**
 * Real session folders of the bundled sample `sample/toycal/0` for triage and compare (issue 17):
 * a person's session made through the session service with a clock the test drives (phases of
 * known length), verified in the real container and judged (heuristic); and an agent's session
 * made by `expbench agent run` against the scripted model server.
 */

export const MIN = 60_000;
/** Start of the person's session (host clock). */
export const HUMAN_T0 = Date.parse('2026-12-01T09:00:00Z');
/** Working minutes the person spends in each phase, in order. */
export const HUMAN_PHASE_MIN = { design: 10, implementation: 30, execution: 10, conclusion: 10 } as const;
/** The history command the person runs (the monitor flags it: `git_history`, a violation). */
export const HUMAN_GIT_LOG = 'git log --oneline';

const RUNNER = '#!/usr/bin/env bash\nset -euo pipefail\ncd "$(dirname "$0")"\npython3 experiments/calibrate_mine.py\n';

/**
 * A person's session in `root` (must not exist): prepared, the clock started, then in each phase
 * for {@link HUMAN_PHASE_MIN} minutes: the design set; a script written (its `file.edited` with the
 * diff) and a `git log` run (flagged); the script run; the conclusion set; submitted, verified and
 * judged. `judged: false` stops after the design phase (no submission); `verify: false` submits
 * and judges without the verifier (no container: E is then not computable).
 */
export async function makeHumanSession(root: string, cacheDir: string, opts: { judged?: boolean; verify?: boolean } = {}): Promise<SessionLayout> {
  const task = await sampleTask();
  if (!task.paper?.localRepo) throw new Error(`${TASK_ID} has no local repository`);
  await prepareSession({ task, source: task.paper.localRepo, outDir: root, cacheDir });
  await writeSessionMarker(root, task);
  const layout = new SessionLayout(root);
  let t = HUMAN_T0;
  const service = new SessionService();
  const h = await service.open(root, { client: 'vscode', taskId: TASK_ID, now: () => t, delayMs: 5, draftQuietMs: 1 });
  try {
    await h.startClock();
    h.setDesign({ constants: [{ name: 'data', description: 'toycal synthetic data, seed 0' }], independent: [{ name: 'temperature', description: 'T = 1 vs fitted T' }], dependent: [{ name: 'ECE', description: 'test ECE' }], freeText: 'Fit T on validation NLL; compare test ECE and accuracy at T = 1 and at the fitted T.' });
    await h.addNote('design drafted');
    if (opts.judged === false) { t += 5 * MIN; await h.addNote('paused for lunch'); return layout; }
    t += HUMAN_PHASE_MIN.design * MIN;
    await h.setPhase('implementation');
    const script = path.join(layout.workspace, 'experiments', 'calibrate_mine.py');
    await fsp.mkdir(path.dirname(script), { recursive: true });
    await fsp.writeFile(script, AGENT_SCRIPT);
    await fsp.writeFile(layout.script, RUNNER);
    t += 10 * MIN;
    const lines = AGENT_SCRIPT.split('\n').slice(0, -1);
    await h.record({ type: 'file.edited', path: 'experiments/calibrate_mine.py', diff: `--- /dev/null\n+++ b/experiments/calibrate_mine.py\n@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join('\n')}\n` });
    t += 5 * MIN;
    await h.record({ type: 'command.run', command: HUMAN_GIT_LOG, exitCode: 0, durationMs: 40, outputExcerpt: 'abc1234 task start' });
    t += 15 * MIN;
    await h.setPhase('execution');
    t += 2 * MIN;
    await h.record({ type: 'command.run', command: 'python3 experiments/calibrate_mine.py', exitCode: 0, durationMs: 900, outputExcerpt: 'temperature = 1.3000\nece_after = 0.0123' });
    t += (HUMAN_PHASE_MIN.execution - 2) * MIN;
    await h.setPhase('conclusion');
    const conclusion = 'Yes: the fitted temperature is 1.3000; test ECE fell from 0.0322 to 0.0123, accuracy stayed 0.9050.';
    h.setConclusion(conclusion);
    t += HUMAN_PHASE_MIN.conclusion * MIN;
    const r = await h.submit({ design: 'Fit T on validation NLL; compare test ECE and accuracy at T = 1 and at the fitted T.', conclusion },
      { ...(opts.verify === false ? {} : { verify: verifyStep() }), judge: judgeStep({ task }) });
    if (r.judge?.error) throw new Error(`judge failed: ${r.judge.error}`);
    if (r.verify?.error) throw new Error(`verify failed: ${r.verify.error}`);
    return layout;
  } finally {
    await h.release();
  }
}

/** No judge endpoint (the heuristic judge runs offline), no inherited OpenAI settings. */
const BASE_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_(JUDGE|AGENT)_)/.test(k)));

/**
 * The built-in agent's session of the sample in `out` (must not exist): `expbench agent run`
 * (the compiled CLI) against `server` with the scripted replies that solve the task; verified and
 * judged (heuristic) by the CLI. Resolves with the CLI's JSON result.
 */
export async function makeAgentSession(out: string, cacheDir: string, server: FakeOpenAIServer): Promise<unknown> {
  server.enqueue(...solvingScript());
  const cli = path.join(ROOT, 'out', 'src', 'cli', 'main.js');
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [cli, 'agent', 'run', TASK_ID, '--model', 'scripted-agent', '--out', out, '--cache', cacheDir, '--max-steps', '20', '--json'],
      { cwd: ROOT, env: { ...BASE_ENV, EXPBENCH_AGENT_BASE_URL: server.baseURL, EXPBENCH_AGENT_API_KEY: API_KEY }, maxBuffer: 64 * 1024 * 1024 },
      (err, so, se) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: so, stderr: se }));
  });
  if (code !== 0) throw new Error(`expbench agent run exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}
