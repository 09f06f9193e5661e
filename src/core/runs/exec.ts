import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { isExpBenchError, ExpBenchError } from '../errors';
import { resumeAgentTask, runAgentTask, type AgentRunResult } from '../flows/agentRun';
import { importSession } from '../flows/importSession';
import { judgeStep } from '../flows/judge';
import { SessionService } from '../flows/sessionService';
import { runStep } from '../flows/steps';
import { verifyStep } from '../flows/verify';
import { endpointFromEnv, type LlmEndpoint } from '../llm/endpoint';
import { readPriceTable, type PriceTable } from '../llm/ledger';
import { log } from '../log';
import { connectDocker } from '../sandbox';
import { findTask, loadDatasets } from '../tasks/loader';
import type { Task } from '../tasks/types';
import { errorMessage } from '../util/errors';
import { inspectSessionFolder } from '../workspace/folder';
import { foldRunSet, type RunSetView, type UnitView } from './fold';
import { changedParts } from './keys';
import { RunSetLayout } from './layout';
import { planUnit, specDatasets } from './plan';
import { writeUnitResult, type UnitResult } from './result';
import { readSessionProgress, unitOutcome } from './session';
import { RunSetSpecSchema, specDefaults, type RunSetSpec } from './spec';
import { readRunSet } from './state';

const logger = log('runs');

/** Options of {@link execUnit}. */
export interface ExecUnitOptions {
  /** The run set's folder. */
  dir: string;
  unit: string;
  try: number;
  /** The environment the endpoints come from (the agent's: EXPBENCH_AGENT_*, OPENAI_*; the judge's: EXPBENCH_JUDGE_*). */
  env?: NodeJS.ProcessEnv;
  /** Stops the unit cleanly (the agent records `agent stopped: cancelled`; its container is removed). */
  signal?: AbortSignal;
  docker?: Docker;
  /** Progress lines (the unit's log). */
  onLine?: (text: string) => void;
  /** Waits between retries of failed model requests (tests). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * One unit of a run set, as `expbench runs exec DIR --unit KEY --try N` runs it wherever its
 * placement put it (docs/placement.md): reads the unit from the run set's state, checks that its
 * key still holds (the task file, the actor, the image and the pin as they are now), then does
 * what its session needs next:
 * - agent, no session yet (or a preparation that was killed): prepare and run the agent
 *   (src/core/flows/agentRun.ts `runAgentTask`);
 * - agent, a session with work and no submission: go on with the agent's conversation from the
 *   event log (`resumeAgentTask`); a run a limit stopped is submitted as it stands when the spec's
 *   `submitOnStop` holds (default), so the table counts it;
 * - import, no session yet: import as session (src/core/flows/importSession.ts); an import
 *   interrupted before its submission is moved aside (`exec/<name>/discarded-try-N`) and made again
 *   from the same files;
 * - a submitted session: the verifier and the judge, each only when it has not run after the
 *   submission or errored.
 * Then it writes the try's result (`exec/<name>/try-N.result.json`, src/core/runs/result.ts) and
 * returns it. Never throws for the unit's own failures: they are the result.
 * @throws ExpBenchError BAD_INPUT when the folder is no run set or holds no such unit
 */
export async function execUnit(o: ExecUnitOptions): Promise<UnitResult> {
  const layout = new RunSetLayout(o.dir);
  const read = await readRunSet(layout.state);
  const view = read ? foldRunSet(read.records) : undefined;
  if (!view) throw new ExpBenchError('BAD_INPUT', layout.root, 'not a run set (no runset.jsonl with a runset.created record)');
  const u = view.byKey.get(o.unit);
  if (!u) throw new ExpBenchError('BAD_INPUT', o.unit, `no such unit in the run set ${layout.root}`);
  await fsp.mkdir(layout.exec(u.name), { recursive: true });
  const result = await run(view, u, layout, o).catch((e: unknown) => classifyError(e, o.signal));
  const full: UnitResult = { v: 1, unit: u.unit, try: o.try, at: new Date().toISOString(), ...result };
  await writeUnitResult(layout.result(u.name, o.try), full);
  return full;
}

type Partial = Omit<UnitResult, 'v' | 'unit' | 'try' | 'at'>;

async function run(view: RunSetView, u: UnitView, layout: RunSetLayout, o: ExecUnitOptions): Promise<Partial> {
  const env = o.env ?? process.env;
  const say = (t: string) => { logger.info(`${u.name}: ${t}`); o.onLine?.(t); };
  const spec = RunSetSpecSchema.parse(view.spec);
  const d = specDefaults(spec);
  const loaded = await loadDatasets(specDatasets(spec, env));
  const task = findTask(loaded, u.task);
  if (!task) return { status: 'failed', message: `task ${u.task} is not in the datasets ${specDatasets(spec, env).join(', ')} any more` };
  const now = await planUnit(spec, task, u.actor, u.attempt);
  if (now.unit !== u.unit) return { status: 'failed', message: `the unit's key changed since it was planned (${changedParts(u.keyParts, now.keyParts).join('; ')}): \`runs resume\` refuses this run set` };
  const sessionDir = layout.session(u.dir);
  const docker = o.docker ?? connectDocker();
  const folder = await inspectSessionFolder(sessionDir);
  say(`try ${o.try}: the session is ${folder.state}`);
  if (folder.state === 'damaged' || folder.state === 'foreign') {
    return { status: 'failed', message: `the unit's session folder ${sessionDir} is ${folder.state}${folder.manifestProblem ? ` (${folder.manifestProblem})` : ''}: move it away to run the unit afresh` };
  }
  const judgeEndpoint = d.judge ? endpointFromEnv('judge', env) : undefined;
  const prices = u.actor.kind === 'agent' && u.actor.prices ? await readPriceTable(u.actor.prices) : undefined;
  if (folder.state !== 'submitted') {
    if (u.actor.kind === 'agent') {
      const endpoint = endpointFromEnv('agent', { ...env, EXPBENCH_AGENT_MODEL: u.actor.model });
      if (!endpoint) return { status: 'failed', message: 'no agent endpoint: set EXPBENCH_AGENT_BASE_URL (or OPENAI_BASE_URL) and/or EXPBENCH_AGENT_API_KEY (or OPENAI_API_KEY) where the run set runs' };
      const r = await agentWork(u, task, sessionDir, folder.state, spec, { endpoint, judgeEndpoint, prices, docker, o, say });
      if (r.agent.stop === 'cancelled' || o.signal?.aborted) return { status: 'interrupted', message: `stopped: ${r.agent.message}` };
      const verdict = classifyStop(r);
      if (verdict) return verdict;
      if (!r.submission && d.submitOnStop && !['model_error', 'error', 'session_lost'].includes(r.agent.stop)) {
        say(`the agent stopped (${r.agent.stop}): submitting the session as it stands`);
      } else if (!r.submission) {
        return { status: 'done', message: `not submitted: the agent stopped (${r.agent.stop}: ${r.agent.message})`, outcome: await unitOutcome(sessionDir) };
      }
    } else if (u.actor.kind === 'import') {
      if (folder.state === 'prepared' || folder.state === 'worked') {
        const aside = path.join(layout.exec(u.name), `discarded-try-${o.try}`);
        say(`an import interrupted before its submission: moved to ${aside}, imported again`);
        await fsp.rename(sessionDir, aside);
      }
      const r = await importSession({
        files: u.actor.files.map((f) => f.path), task, source: u.source, ...(u.commit ? { commit: u.commit } : {}), outDir: sessionDir, image: u.image,
        ...(u.actor.trajectoryId ? { trajectoryId: u.actor.trajectoryId } : {}),
        ...(d.verify ? { verify: verifyStep({ docker }) } : {}), ...(d.judge ? { judge: judgeStep({ task, endpoint: judgeEndpoint }) } : {}),
        signal: o.signal, onProgress: (p) => say(`${p.step}: ${p.message}`),
      });
      say(`imported: ${r.patch.applied} file(s) applied, ${r.problems.length} problem(s)`);
      if (!r.submission) return { status: 'failed', message: `imported, but not submitted: ${r.problems.filter((p) => p.severity === 'error').map((p) => p.message).join('; ') || 'see private/import/record.json'}` };
    } else {
      return { status: 'failed', message: `units of kind ${u.actor.kind} are run by campaigns (issue 32), not by runs exec` };
    }
  }
  return finishSubmitted(sessionDir, task, { verify: d.verify, judge: d.judge, judgeEndpoint, prices, docker, signal: o.signal, say });
}

interface AgentCtx {
  endpoint: LlmEndpoint; judgeEndpoint?: LlmEndpoint; prices?: PriceTable; docker: Docker; o: ExecUnitOptions; say: (t: string) => void;
}

async function agentWork(u: UnitView, task: Task, sessionDir: string, state: string, spec: RunSetSpec, c: AgentCtx): Promise<AgentRunResult> {
  if (u.actor.kind !== 'agent') throw new Error('not an agent unit');
  const a = u.actor;
  const common = {
    task, outDir: sessionDir, endpoint: c.endpoint, prices: c.prices, docker: c.docker, signal: c.o.signal, sleep: c.o.sleep,
    limits: { maxSteps: a.maxSteps, maxTokens: a.maxTokens, budgetUsd: a.budgetUsd, maxWorkingMs: a.maxMinutes === undefined ? undefined : a.maxMinutes * 60_000 },
    network: a.network ?? false, verify: false, judge: false,
    onStep: (s: { kind: string; step: number; text: string }) => c.say(`[${s.step}] ${s.kind} ${s.text}`),
  };
  // The steps after the submission run in finishSubmitted (one path for a fresh run and a resumed one).
  if (state === 'prepared' || state === 'worked') {
    c.say('going on with the agent\'s conversation from the session\'s event log');
    return resumeAgentTask(common);
  }
  return runAgentTask({ ...common, source: u.source, ...(u.commit ? { commit: u.commit } : {}), image: u.image, onProgress: (p) => c.say(`${p.step}: ${p.message}`) });
}

/** A stop that decides the try without a submission: harness errors retried, the rest failed; undefined: go on. */
function classifyStop(r: AgentRunResult): Partial | undefined {
  const { stop, message } = r.agent;
  if (stop === 'model_error') {
    return retryableModelError(message)
      ? { status: 'retry', message: `model endpoint: ${message}` }
      : { status: 'failed', message: `the model endpoint refused the request: ${message}` };
  }
  if (stop === 'error') return { status: 'retry', message: `the container or the engine failed under the agent: ${message}` };
  if (stop === 'session_lost') return { status: 'failed', message: `another client took the unit's session over: ${message}` };
  return undefined;
}

/** A model endpoint's failure worth another try: 5xx, 408, 409, 429, timeouts, connection errors. */
export function retryableModelError(message: string): boolean {
  return /(?:^|\D)(?:5\d\d|408|409|429)(?:\D|$)|time(?:d)? ?out|ECONN|ENOTFOUND|EAI_AGAIN|socket|connection/i.test(message);
}

/**
 * The steps a submitted session still needs: the verifier (clean) when it has not run after the
 * submission or errored, the judge likewise (or when its record had harness errors); each recorded
 * as `verify.finished` / `judge.finished` through the session service (client `runs`). A session
 * not submitted yet (a run a limit stopped) is submitted first with its drafts.
 */
async function finishSubmitted(sessionDir: string, task: Task, c: {
  verify: boolean; judge: boolean; judgeEndpoint?: LlmEndpoint; prices?: PriceTable; docker: Docker; signal?: AbortSignal; say: (t: string) => void;
}): Promise<Partial> {
  let p = await readSessionProgress(sessionDir);
  const needVerify = () => c.verify && (!p.verify || p.verify.error !== undefined);
  const needJudge = () => c.judge && (!p.judge || p.judge.error !== undefined || !p.judge.ok);
  if (!p.submitted || needVerify() || needJudge()) {
    const service = new SessionService();
    const h = await service.open(sessionDir, { client: 'runs', taskId: task.id });
    try {
      if (!p.submitted && !p.gaveUp) {
        await h.submit({ design: h.state.design, conclusion: h.state.conclusion }, { signal: c.signal });
        c.say('submitted');
        p = await readSessionProgress(sessionDir);
      }
      if (p.submitted && needVerify()) {
        c.say('verifying (clean tree)');
        const out = await runStep(verifyStep({ docker: c.docker }), h.layout, c.signal);
        await h.record({ type: 'verify.finished', ...out });
      }
      if (p.submitted && needJudge()) {
        c.say(`judging (${c.judgeEndpoint ? `model ${c.judgeEndpoint.model}` : 'heuristic pre-judge'})`);
        const out = await runStep(judgeStep({ task, endpoint: c.judgeEndpoint, prices: c.prices }), h.layout, c.signal);
        await h.record({ type: 'judge.finished', ...out });
      }
    } finally {
      await h.release();
    }
    p = await readSessionProgress(sessionDir);
  }
  if (c.signal?.aborted) return { status: 'interrupted', message: 'stopped during the steps after the submission' };
  const outcome = await unitOutcome(sessionDir, p);
  if (c.verify && p.verify?.error) return { status: 'retry', message: `verifier: ${p.verify.error}`, outcome };
  if (c.judge && (p.judge?.error || (p.judge && !p.judge.ok))) return { status: 'retry', message: `judge: ${p.judge?.error ?? p.judge?.summary ?? 'harness errors in the record'}`, outcome };
  const parts = [p.submitted ? 'submitted' : p.gaveUp ? 'gave up' : 'not submitted', p.verify?.summary && `verify: ${p.verify.summary}`, p.judge?.summary && `judge: ${p.judge.summary}`].filter(Boolean);
  return { status: 'done', message: parts.join('; '), outcome };
}

function classifyError(e: unknown, signal?: AbortSignal): Partial {
  const message = errorMessage(e);
  if (signal?.aborted || isExpBenchError(e, 'CANCELLED')) return { status: 'interrupted', message: `stopped: ${message}` };
  if (isExpBenchError(e, 'DOCKER_UNAVAILABLE') || isExpBenchError(e, 'CONTAINER_FAILED') || isExpBenchError(e, 'LLM_FAILED')) return { status: 'retry', message };
  return { status: 'failed', message };
}
