import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { bundledDatasetDir } from '../../src/core/paths';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import type { Task } from '../../src/core/tasks/types';
import type { FakeOpenAIServer, RecordedRequest, ToolCallReply } from '../harness/fakeOpenAIServer';

export const ROOT = path.resolve(__dirname, '../../..');
export const TASK_ID = 'sample/toycal/0';
/** A made-up key: it must reach the server in the Authorization header only. */
export const API_KEY = 'sk-agenttest-0123456789abcdef';

export async function sampleTask(): Promise<Task> {
  const task = findTask(await loadDatasets([bundledDatasetDir()]), TASK_ID);
  if (!task) throw new Error(`${TASK_ID} is not in the bundled sample`);
  return task;
}

/**
 * What no request to the agent's model may hold: the ground truth of the task (each sentence of
 * `expected_outcome`, each requirement, each value of `design_complexity`), every line of the
 * masked script (from samples/repos, at least 20 characters once trimmed: shorter ones such as
 * `import os` are ordinary code), except what the brief itself says; and the API key.
 */
export function forbiddenStrings(task: Task): string[] {
  const masked = task.maskedSource.flatMap((p) => readFileSync(path.join(ROOT, 'samples/repos/toy-calibration', p), 'utf8').split('\n'))
    .map((l) => l.trim()).filter((l) => l.length >= 20);
  const design = [...task.design.constants, ...task.design.independent, ...task.design.dependent]
    .flatMap((v) => [v.description, ...(v.values ?? [])]).filter((s) => s.length >= 12);
  // A ground-truth phrase that the public brief itself says (`test accuracy`) is no secret.
  const brief = [task.question, task.method, task.agentInstructions].join('\n');
  return [
    ...task.expectedOutcome.split(/(?<=\.)\s+/).map((s) => s.trim()).filter(Boolean),
    ...task.requirements.map((r) => r.text),
    ...design, ...masked,
  ].filter((s) => !brief.includes(s)).concat(API_KEY);
}

/** Requests whose body holds one of `forbidden`, as `request n: "…"` lines (empty: none). */
export function groundTruthSeen(server: FakeOpenAIServer, forbidden: string[]): string[] {
  const seen: string[] = [];
  server.requests.forEach((r: RecordedRequest, i) => {
    const body = JSON.stringify(r.body);
    const texts = [body, ...((r.body?.messages ?? []) as Array<{ content?: unknown }>).map((m) => String(m.content ?? ''))];
    for (const f of forbidden) if (texts.some((t) => t.includes(f) || t.includes(JSON.stringify(f).slice(1, -1)))) seen.push(`request ${i + 1}: ${JSON.stringify(f)}`);
  });
  return seen;
}

/** The agent's own solution script (not the masked one: none of its lines is a line of it). */
export const AGENT_SCRIPT = `import os, sys, json
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from toycal import data, metrics, model as toymodel

def best_temperature(val_logits, val_labels):
    candidates = [round(0.5 + 0.05 * k, 2) for k in range(91)]
    scores = {t: metrics.nll(val_logits, val_labels, t) for t in candidates}
    return min(scores, key=scores.get)

train, val, test = data.splits(0)
clf = toymodel.LogisticRegression().fit(*train)
temp = best_temperature(clf.logits(val[0]), val[1])
logits = clf.logits(test[0])
out = {'temperature': temp, 'test_accuracy': metrics.accuracy(logits, test[1]),
       'ece_before': metrics.ece(logits, test[1]), 'ece_after': metrics.ece(logits, test[1], temperature=temp)}
os.makedirs('results', exist_ok=True)
with open(os.path.join('results', 'temperature_scaling.json'), 'w') as fh:
    json.dump({k: round(v, 4) for k, v in out.items()}, fh, indent=2)
for k, v in out.items():
    print('%s = %.4f' % (k, v))
`;

export const AGENT_RUNNER = '#!/usr/bin/env bash\nset -euo pipefail\ncd "$(dirname "$0")"\npython3 experiments/calibrate_agent.py\n';

/** The scripted model's replies that solve the sample task (one reply per model call). */
export function solvingScript(): Array<{ toolCalls: ToolCallReply[]; content?: string }> {
  return [
    { content: 'Looking at the repository first.', toolCalls: [{ name: 'list_files', arguments: {} }, { name: 'read_file', arguments: { path: 'toycal/metrics.py' } }] },
    { toolCalls: [{ name: 'set_design', arguments: {
      constants: [
        { name: 'data', description: 'synthetic blobs from toycal.data, seed 0' },
        { name: 'classifier', description: 'the repository logistic regression' },
        { name: 'bins', description: '15 bins for ECE' },
      ],
      independent: [{ name: 'calibration', description: 'whether logits are divided by a fitted T', values: ['T = 1', 'T fitted on validation'] }],
      dependent: [
        { name: 'ECE', description: 'test calibration error' },
        { name: 'accuracy', description: 'test accuracy' },
        { name: 'T', description: 'the fitted temperature' },
      ],
      freeText: 'Fit T on validation NLL by a grid over 0.5..5.0, compare test metrics at T = 1 and at the fitted T.',
    } }] },
    { toolCalls: [
      { name: 'write_file', arguments: { path: 'experiments/calibrate_agent.py', content: AGENT_SCRIPT } },
      { name: 'write_file', arguments: { path: 'reproduce_exp_bench.sh', content: AGENT_RUNNER } },
    ] },
    { toolCalls: [{ name: 'shell', arguments: { command: 'python3 experiments/calibrate_agent.py && whoami && pwd', timeout_seconds: 60 } }] },
    { toolCalls: [{ name: 'run_script', arguments: {} }] },
    { toolCalls: [{ name: 'set_conclusion', arguments: { text: 'Yes. Our run fitted temperature = 1.3000 (above 1: over-confident). Test ECE went from ece_before = 0.0322 to ece_after = 0.0123; test_accuracy = 0.9050 both before and after.' } }] },
    { toolCalls: [{ name: 'submit', arguments: {} }] },
  ];
}
