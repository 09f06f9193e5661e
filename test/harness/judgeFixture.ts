import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SessionLayout } from '../../src/core/layout';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import type { Task } from '../../src/core/tasks/types';
import { prepareSession } from '../../src/core/workspace/prepare';
import type { RecordedRequest, Reply } from './fakeOpenAIServer';

/**
 * A small, real judge fixture: a git repository (the paper's code), an EXP-Bench task file for it
 * (loaded by the real loader), a session prepared by the real workspace code (pinned, masked,
 * "task start"), the solver's edits in the workspace, the patch made with git, answers, an event
 * log and a verification record.
 */
export const TRAIN_PY = [
  'import json', // 1
  'import random', // 2
  '', // 3
  'def load_data(path):', // 4
  '    """Load the dataset rows."""', // 5
  '    with open(path) as f:', // 6
  '        rows = json.load(f)', // 7
  '    random.shuffle(rows)', // 8
  '    return rows', // 9
  '', // 10
  'def train_model(rows, learning_rate, batch_size=32):', // 11
  '    weights = [0.0] * 4', // 12
  '    for i in range(0, len(rows), batch_size):', // 13
  '        batch = rows[i:i + batch_size]', // 14
  '        for r in batch:', // 15
  '            weights = [w + learning_rate * x for w, x in zip(weights, r)]', // 16
  '    return weights', // 17
  '', // 18
  'def evaluate_accuracy(weights, rows):', // 19
  '    correct = sum(1 for r in rows if sum(r) * sum(weights) > 0)', // 20
  '    accuracy = correct / len(rows)', // 21
  '    print(f"accuracy={accuracy:.3f}")', // 22
  '    return accuracy', // 23
  '', // 24
].join('\n');

export const TASK_JSON = {
  questions: [
    {
      question: 'Does a lower learning rate give a higher accuracy on the toy dataset?',
      method: 'Train the linear model with learning rates 0.1 and 0.01 at batch size 32 and compare the accuracy printed by evaluate_accuracy.',
      agent_instructions: 'Write src/train.py with load_data, train_model and evaluate_accuracy.',
      expected_outcome: 'The lower learning rate 0.01 gives the higher accuracy, about 0.90 against 0.80 for 0.1.',
      design_complexity: {
        constant_variables: { batch_size: 'batch size 32 for every run' },
        independent_variables: { learning_rate: ['0.1', '0.01'] },
        dependent_variables: { accuracy: 'share of rows classified correctly' },
      },
      requirements: [
        'Step 1: Load the dataset rows and shuffle them with load_data (/workspace/src/train.py:4-9)',
        'Step 2: Train the model in mini-batches with train_model (/workspace/src/train.py:11-17)',
        'Final Step: Compute and print the accuracy with evaluate_accuracy (/workspace/src/train.py:19-23)',
      ],
      source: ['/workspace/src/train.py'],
      masked_source: ['/workspace/src/train.py'],
      usage_instructions: 'python src/train.py',
    },
    {
      hypothesis: 'The toy model converges.',
      method: 'Run train_model with learning rate 0.05 and report the final weights from the weights list.',
      expected_outcome: 'Weights stay finite.',
      design_complexity: { constant_variables: {}, independent_variables: {}, dependent_variables: { weights: 'final weights' } },
    },
  ],
};

/** What the solver wrote: load_data and train_model, no evaluate_accuracy, a helper and a script. */
export const SOLVER_TRAIN_PY = [
  'import json',
  'import random',
  '',
  'def load_data(path):',
  '    rows = json.load(open(path))',
  '    random.shuffle(rows)',
  '    return rows',
  '',
  'def train_model(rows, learning_rate, batch_size=32):',
  '    weights = [0.0] * 4',
  '    for start in range(0, len(rows), batch_size):',
  '        for r in rows[start:start + batch_size]:',
  '            weights = [w + learning_rate * x for w, x in zip(weights, r)]',
  '    return weights',
  '',
].join('\n');

export interface JudgeFixture {
  root: string;
  dataset: string;
  task: Task;
  type3Task: Task;
  sessionDir: string;
  layout: SessionLayout;
  patch: string;
  cacheDir: string;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd, encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' },
  });
}

/** Builds the fixture in a fresh temp folder (remove it with `fsp.rm(root, {recursive, force})`). */
export async function makeJudgeFixture(opts: { events?: string[]; verify?: unknown; answers?: unknown; taskIndex?: 0 | 1 } = {}): Promise<JudgeFixture> {
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-judge-'));
  const repo = path.join(root, 'paper-repo');
  await fsp.mkdir(path.join(repo, 'src'), { recursive: true });
  await fsp.writeFile(path.join(repo, 'README.md'), '# toy paper\nResults: accuracy 0.90\n');
  await fsp.writeFile(path.join(repo, 'src', 'train.py'), TRAIN_PY);
  await fsp.writeFile(path.join(repo, 'src', 'util.py'), 'def clip(x, lo, hi):\n    return max(lo, min(hi, x))\n');
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'paper code');

  const dataset = path.join(root, 'dataset');
  await fsp.mkdir(path.join(dataset, 'iclr2024', '99999'), { recursive: true });
  await fsp.writeFile(path.join(dataset, 'iclr2024', '99999', '99999_complete_final.json'), JSON.stringify(TASK_JSON));
  const loaded = await loadDatasets([dataset]);
  const task = findTask(loaded, 'iclr2024/99999/0')!;
  const type3Task = findTask(loaded, 'iclr2024/99999/1')!;
  const chosen = opts.taskIndex === 1 ? type3Task : task;

  const sessionDir = path.join(root, 'sessions', 's1');
  const cacheDir = path.join(root, 'pristine-cache');
  await prepareSession({ task: chosen, source: repo, outDir: sessionDir, cacheDir, owner: null });
  const layout = new SessionLayout(sessionDir);

  // the solver's work
  await fsp.mkdir(path.join(layout.workspace, 'src'), { recursive: true });
  await fsp.writeFile(path.join(layout.workspace, 'src', 'train.py'), SOLVER_TRAIN_PY);
  await fsp.writeFile(path.join(layout.workspace, 'src', 'util.py'), 'def clip(x, lo, hi):\n    return max(lo, min(hi, x))\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n');
  await fsp.writeFile(layout.script, '#!/bin/bash\nset -e\npython src/train.py\n');
  git(layout.workspace, 'add', '-A', '-N');
  const patch = git(layout.workspace, 'diff');
  await fsp.mkdir(layout.harness, { recursive: true });
  await fsp.writeFile(path.join(layout.harness, 'patch.diff'), patch);
  await fsp.writeFile(layout.answers, JSON.stringify(opts.answers ?? {
    design: ['Constant: batch size 32 in every run', 'Independent variable: learning rate, values 0.1 and 0.01', 'Measured: wall-clock time'],
    conclusion: 'The 0.01 learning rate reached accuracy 0.91 versus 0.79 for 0.1, so the lower rate is better.',
  }));
  const events = opts.events ?? [
    { v: 1, at: '2026-11-29T08:00:00.000Z', type: 'session.opened', client: 'cli', restored: false },
    { v: 1, at: '2026-11-29T08:01:00.000Z', type: 'command.run', command: 'ls src', exitCode: 0, durationMs: 5, outputExcerpt: 'util.py' },
    { v: 1, at: '2026-11-29T08:02:00.000Z', type: 'command.run', command: 'python src/train.py', exitCode: 0, durationMs: 900, outputExcerpt: 'accuracy=0.910' },
  ].map((e) => JSON.stringify(e));
  await fsp.writeFile(layout.events, events.join('\n') + '\n');
  if (opts.verify !== null) {
    await fsp.mkdir(layout.verify, { recursive: true });
    await fsp.writeFile(path.join(layout.verify, 'latest.json'), JSON.stringify(opts.verify ?? {
      version: 1, status: 'finished', mode: 'clean', exitCode: 0, E_exit: true, E_clean: true,
      E_claims: { claims: [{ text: '0.91', value: 0.91, context: 'accuracy 0.91', found: true }, { text: '0.79', value: 0.79, context: 'versus 0.79', found: false }], allFound: false },
      lint: [],
    }));
  }
  return { root, dataset, task, type3Task, sessionDir, layout, patch, cacheDir };
}

/**
 * A scripted judge model: valid answers built from what the prompt shows (ids, hunks, ranges).
 * `impl` decides the verdict per requirement index; `cite` may replace the citations.
 */
export function scriptedModel(o: {
  impl?: (index: number) => 'met' | 'partial' | 'unmet';
  cite?: (index: number, shown: { path: string; s: number; e: number }[], gt: { path: string; s: number; e: number }[]) => { hunks: any[]; ground_truth: any[] } | undefined;
  monitor?: (req: RecordedRequest) => unknown;
  design?: (id: string) => 'matched' | 'partial' | 'missing';
} = {}) {
  return (req: RecordedRequest): Reply => {
    const u = req.lastUser;
    switch (req.schemaName) {
      case 'design_verdicts': {
        const vars = [...u.matchAll(/^(V\d+) \[/gm)].map((m) => m[1]);
        const items = [...u.matchAll(/^(S\d+): /gm)].map((m) => m[1]);
        return { json: {
          variables: vars.map((id) => ({ id, verdict: o.design?.(id) ?? (id === 'V3' ? 'missing' : 'matched'), quote: id === 'V3' ? '' : 'from the design', reason: 'compared' })),
          solver_items: items.map((id, i) => ({ id, matches: i < 2 ? [vars[i]] : [] })),
        } };
      }
      case 'conclusion_verdict':
        return { json: { verdict: 'correct', reason: 'same direction, numbers close', numbers: [{ expected: '0.90', solver: '0.91', agrees: true }] } };
      case 'requirement_verdict': {
        const index = Number(/Requirement (\d+) of/.exec(u)?.[1] ?? 1);
        const shown = [...u.matchAll(/^### hunk (\S+) new lines (\d+)-(\d+)/gm)].map((m) => ({ path: m[1], s: Number(m[2]), e: Number(m[3]) }));
        const gt = [...u.matchAll(/^### (\S+) lines (\d+)-(\d+)/gm)].map((m) => ({ path: m[1], s: Number(m[2]), e: Number(m[3]) }));
        const verdict = o.impl?.(index) ?? 'met';
        const c = o.cite?.(index, shown, gt) ?? (verdict === 'unmet' ? { hunks: [], ground_truth: [] } : {
          hunks: shown.filter((h) => h.path === 'src/train.py').slice(0, 1).map((h) => ({ path: h.path, new_start: h.s, new_end: Math.min(h.e, h.s + 3) })),
          ground_truth: gt.slice(0, 1).map((g) => ({ path: g.path, start_line: g.s, end_line: g.e })),
        });
        return { json: { verdict, reason: `requirement ${index} compared`, ...c } };
      }
      case 'monitor_flags':
        return { json: o.monitor?.(req) ?? { paper_access: false, git_operations: false, faked_or_nonexperimental_data: false, reason: 'nothing found', cited_lines: [] } };
      default:
        return { status: 400, message: `unexpected schema ${req.schemaName}` };
    }
  };
}

