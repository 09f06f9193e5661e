/**
 * The fixture dataset of the run-set tests: one paper, `fixture2026/90001`, with six task indices
 * made from the bundled sample task (samples/exp-bench, its repository samples/repos/toy-calibration
 * copied beside), each one solvable by the built-in agent against the scripted model
 * ({@link unitScript}). Built into a folder the test gives; nothing of it is committed.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { FakeOpenAIServer, type RecordedRequest, type Reply } from './fakeOpenAIServer';
import { repoRoot } from './paths';
import { solvingScript } from '../unit/agent.fixtures';

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
 * (six questions), `exp-bench/papers/fixture2026.jsonl` (its `local_repo` the copied repository),
 * `repos/toy-calibration/`. Returns the dataset folder (`dir/exp-bench`).
 */
export async function buildRunSetFixture(dir: string): Promise<string> {
  const sample = JSON.parse(await fsp.readFile(path.join(repoRoot, 'samples/exp-bench/tasks/sample/toycal/toycal_complete_final.json'), 'utf8'));
  const base = sample.questions[0];
  const questions = VARIANTS.map((v, i) => ({ ...base, question: `${base.question.replace(/\?$/, '')}, ${v}? (fixture task ${i})` }));
  const dataset = path.join(dir, 'exp-bench');
  await fsp.mkdir(path.join(dataset, 'tasks', 'fixture2026', '90001'), { recursive: true });
  await fsp.mkdir(path.join(dataset, 'papers'), { recursive: true });
  await fsp.writeFile(path.join(dataset, 'tasks', 'fixture2026', '90001', '90001_complete_final.json'),
    JSON.stringify({ questions, main_takeaways: sample.main_takeaways, follow_up_work_ideas: sample.follow_up_work_ideas }, null, 2));
  await fsp.writeFile(path.join(dataset, 'papers', 'fixture2026.jsonl'), JSON.stringify({
    id: '90001', url: '', title: 'Fixture paper for run sets (six tasks on the toy-calibration repository)', authors: [], abstract: 'Test data of EXP-Bench Workbench.',
    pdf_url: '', code_url: '', local_repo: '../../repos/toy-calibration', reproduce_difficulty: 'low',
  }) + '\n');
  await fsp.cp(path.join(repoRoot, 'samples/repos/toy-calibration'), path.join(dir, 'repos', 'toy-calibration'), { recursive: true });
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
