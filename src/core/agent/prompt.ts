import type { Task } from '../tasks/types';

/**
 * What the agent may know of a task: the brief a person reads (question, method, agent
 * instructions, the paper's title). Never the ground truth: `expectedOutcome`, `design`,
 * `requirements`, `source`, `usageInstructions` (it names the masked script) and `raw` are left out
 * here, so nothing downstream of {@link agentBrief} can put them in a prompt.
 */
export interface AgentBrief {
  taskId: string;
  question: string;
  method: string;
  agentInstructions: string;
  paperTitle?: string;
}

/** The brief of `task` (see {@link AgentBrief} for what is left out). */
export function agentBrief(task: Task): AgentBrief {
  return {
    taskId: task.id, question: task.question, method: task.method, agentInstructions: task.agentInstructions,
    ...(task.paper?.title ? { paperTitle: task.paper.title } : {}),
  };
}

/** The system message: the agent's role, where it works, what it must deliver. */
export function systemPrompt(): string {
  return [
    'You are a research engineer reproducing one experiment of a paper (an EXP-Bench task).',
    'You work in the paper\'s repository, checked out at /workspace inside a Linux container with no network; some files of the original code were removed and you must write what is missing.',
    'Act only through the tools. Paths are relative to /workspace. Commands run with bash in /workspace.',
    'Deliver, in this order: a structured experimental design (set_design: constant, independent and dependent variables, plus free text);',
    'the implementation, ending with reproduce_exp_bench.sh at the repository root that runs the whole experiment end to end;',
    'a run of that script (run_script) whose output shows the results; a conclusion that answers the question with the numbers you measured (set_conclusion);',
    'then call submit. Report only numbers your own runs printed. Be concise.',
  ].join('\n');
}

/** The first user message: the task's brief. */
export function briefMessage(b: AgentBrief): string {
  return [
    `Task ${b.taskId}${b.paperTitle ? ` — paper: ${b.paperTitle}` : ''}`,
    '', '## Question', b.question,
    '', '## Method', b.method,
    '', '## Instructions', b.agentInstructions,
  ].join('\n');
}

/** What the loop tells the model after a reply without a tool call (also rebuilt on resume: history.ts). */
export const NUDGE = 'Continue with the tools. When the design, the script, a run and the conclusion are done, call submit.';
