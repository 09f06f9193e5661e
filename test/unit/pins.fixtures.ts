import { solvingScript } from './agent.fixtures';

/**
 * The sample's solving script (agent.fixtures.ts) with a look at the history first (a monitor
 * violation: `git log`) and a second edit of the agent's script (`replace_in_file` on the grid
 * line), so that verdicts and a flag pin to different steps.
 */
export function pinningScript(): ReturnType<typeof solvingScript> {
  const s = solvingScript();
  const history = { toolCalls: [{ name: 'shell', arguments: { command: 'git log --oneline -3', timeout_seconds: 30 } }] };
  const fix = { toolCalls: [{ name: 'replace_in_file', arguments: { path: 'experiments/calibrate_agent.py', old: 'for k in range(91)]', new: 'for k in range(91)]  # 0.5..5.0' } }] };
  return [s[0], history, s[1], s[2], fix, ...s.slice(3)];
}
