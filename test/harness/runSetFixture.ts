/**
 * The fixture dataset of the run-set tests: one paper, `fixture2026/90001`, with six task indices
 * made from the bundled sample task (samples/exp-bench, its repository samples/repos/toy-calibration
 * copied beside), each one solvable by the built-in agent against the scripted model
 * ({@link unitScript}). Built into a folder the test gives; nothing of it is committed.
 */
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { FakeOpenAIServer, type RecordedRequest, type Reply } from './fakeOpenAIServer';
import { repoRoot } from './paths';
import { AGENT_RUNNER, AGENT_SCRIPT, solvingScript } from '../unit/agent.fixtures';

export const FIXTURE_PAPER = 'fixture2026/90001';
export const FIXTURE_TASKS = [0, 1, 2, 3, 4, 5].map((i) => `${FIXTURE_PAPER}/${i}`);

/** What each task asks on top of the sample's question (the experiment and its answer stay the sample's). */
const VARIANTS = [
  'as the repository stands',
  'reporting the fitted temperature to two decimals',
  'with the validation split used only to fit the temperature',
  'checking that the predicted classes do not change',
  'with the 15-bin ECE of the test split',
  'with the whole experiment run by reproduce_exp_bench.sh',
];

/**
 * Writes the dataset under `dir`: `exp-bench/tasks/fixture2026/90001/90001_complete_final.json`
 * (six questions, or `count`), `exp-bench/papers/fixture2026.jsonl` (its `local_repo` the copied repository),
 * `repos/toy-calibration/`. Returns the dataset folder (`dir/exp-bench`).
 */
export async function buildRunSetFixture(dir: string, count = VARIANTS.length): Promise<string> {
  const sample = JSON.parse(await fsp.readFile(path.join(repoRoot, 'samples/exp-bench/tasks/sample/toycal/toycal_complete_final.json'), 'utf8'));
  const base = sample.questions[0];
  const questions = Array.from({ length: count }, (_, i) => ({ ...base, question: `${base.question.replace(/\?$/, '')}, ${VARIANTS[i % VARIANTS.length]}? (fixture task ${i})` }));
  const dataset = path.join(dir, 'exp-bench');
  await fsp.mkdir(path.join(dataset, 'tasks', 'fixture2026', '90001'), { recursive: true });
  await fsp.mkdir(path.join(dataset, 'papers'), { recursive: true });
  await fsp.writeFile(path.join(dataset, 'tasks', 'fixture2026', '90001', '90001_complete_final.json'),
    JSON.stringify({ questions, main_takeaways: sample.main_takeaways, follow_up_work_ideas: sample.follow_up_work_ideas }, null, 2));
  await fsp.writeFile(path.join(dataset, 'papers', 'fixture2026.jsonl'), JSON.stringify({
    id: '90001', url: '', title: 'Fixture paper for run sets (six tasks on the toy-calibration repository)', authors: [], abstract: 'Test data of EXP-Bench Workbench.',
    pdf_url: '', code_url: '', local_repo: '../../repos/toy-calibration', reproduce_difficulty: 'low',
  }) + '\n');
  // The paper's repository as papers have it: a git repository (prepared from the pristine cache, pinned at its HEAD).
  const repo = path.join(dir, 'repos', 'toy-calibration');
  await fsp.cp(path.join(repoRoot, 'samples/repos/toy-calibration'), repo, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=fixture', '-c', 'user.email=fixture@example.org', '-c', 'init.defaultBranch=main', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'toy-calibration');
  return dataset;
}

/**
 * The scripted model's replies for one unit: the sample's solving sequence with one tool call per
 * reply, so that an interrupted reply is never half recorded (a resumed run asks again for
 * exactly the reply it had not finished).
 */
export function unitScript(): Reply[] {
  return solvingScript().flatMap((r) => r.toolCalls.map((c, i) => ({ toolCalls: [c], ...(i === 0 && r.content ? { content: r.content } : {}) })));
}

/** The task a request is about: the id its brief (the first user message) names. */
export function taskOf(req: RecordedRequest): string | undefined {
  const brief = ((req.body?.messages ?? []) as Array<{ role: string; content?: unknown }>).find((m) => m.role === 'user')?.content;
  return /Task (\S+\/\S+\/\d+)/.exec(String(brief ?? ''))?.[1];
}

/**
 * Which reply of {@link unitScript} a conversation asks for next: the number of its tool calls
 * that succeeded (a call whose result is an error, such as one a stop interrupted, is asked for
 * again, as a model that reads its tool results would).
 */
export function nextReply(messages: Array<{ role: string; content?: unknown; tool_calls?: Array<{ id: string }> }>): number {
  const failed = new Set(messages.filter((m) => m.role === 'tool' && String(m.content ?? '').startsWith('error:')).map((m) => (m as { tool_call_id?: string }).tool_call_id));
  return messages.filter((m) => m.role === 'assistant' && m.tool_calls?.length && !m.tool_calls.some((c) => failed.has(c.id))).length;
}

/**
 * A scripted model server for many units at once and for resumed conversations: each request is
 * answered with reply {@link nextReply} of {@link unitScript}, so a unit that goes on from its
 * rebuilt conversation gets the reply it would have got. `delayMs` holds every reply (a unit then
 * takes long enough to be caught mid-run).
 */
export async function startUnitModel(delay: number | ((task: string | undefined) => number) = 0): Promise<FakeOpenAIServer> {
  const script = unitScript();
  const server = await new FakeOpenAIServer().start();
  server.handler = async (req: RecordedRequest) => {
    const n = nextReply(req.body?.messages ?? []);
    const ms = typeof delay === 'number' ? delay : delay(taskOf(req));
    if (ms) await new Promise((r) => setTimeout(r, ms));
    return script[n] ?? { status: 500, message: `the scripted sequence has ${script.length} replies; asked for reply ${n + 1}` };
  };
  return server;
}

/**
 * Writes the reference harness's files of one run per task index of the fixture paper under
 * `out` (`outputs/evaluation/fixture2026/90001/<agent>/<model>/`, as the harness lays them out):
 * `…_eval_gen.json` (answers), `…_eval_gen.patch` (`diff -urN` with a host path, the agent's
 * script and `reproduce_exp_bench.sh`), `…_eval_judge.json` (the harness judge's scores) and
 * `…_eval_gen_config_config.json`. `runner(i)` is task i's `reproduce_exp_bench.sh` (default the
 * agent's, which runs the experiment). Returns the records' folder.
 */
export async function writeHarnessRecords(out: string, indices: number[], runner: (i: number) => string = () => AGENT_RUNNER): Promise<string> {
  const folder = path.join(out, 'outputs', 'evaluation', 'fixture2026', '90001', 'someagent', 'somemodel');
  await fsp.mkdir(folder, { recursive: true });
  const host = '/home/someone/exp_bench/workspace';
  const hunk = (text: string) => `@@ -0,0 +1,${text.split('\n').length - 1} @@\n${text.split('\n').slice(0, -1).map((l) => `+${l}`).join('\n')}\n`;
  for (const i of indices) {
    const ws = `toy-calibration_task_index_${i}_iter_1_duration_0.5`;
    const base = path.join(folder, `90001_task_index_${i}_iter_1_duration_0.5_eval_`);
    const file = (rel: string, text: string) => `diff -urN workspace/${ws}/${rel} ${host}/${ws}/${rel}\n--- workspace/${ws}/${rel}\t1969-12-31 19:00:00\n+++ ${host}/${ws}/${rel}\t2025-07-31 15:41:24\n${hunk(text)}`;
    await fsp.writeFile(`${base}gen.patch`, file('experiments/calibrate_agent.py', AGENT_SCRIPT) + file('reproduce_exp_bench.sh', runner(i)));
    await fsp.writeFile(`${base}gen.json`, JSON.stringify({ design: 'Independent: temperature scaling (T = 1 vs fitted). Dependent: ECE, accuracy, T.', conclusion: 'Yes: ECE fell from 0.0322 to 0.0123, accuracy 0.9050 unchanged, T = 1.30.' }));
    await fsp.writeFile(`${base}judge.json`, JSON.stringify({ design_score: 80, setup_score: 70, conclusion_score: 'correct', design_evaluation_explanation: 'x', setup_evaluation_explanation: 'y', conclusion_evaluation_explanation: 'z' }));
    await fsp.writeFile(`${base}gen_config_config.json`, JSON.stringify({
      input_conference_tasks_folder: 'outputs/logs/fixture2026', iterations: 1, agent_name: 'someagent', max_duration_per_task_in_hours: 0.5, mode: 'generate',
      paper_id: '90001', task_index: i, iteration: 1, llm_name: 'somemodel', output_folder: 'outputs/evaluation/fixture2026/90001/someagent/somemodel',
    }));
  }
  return folder;
}
