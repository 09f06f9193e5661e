/**
 * The scripted model of the agent's tests, as a standalone server for a run by hand (issue 18's
 * must-show): `node out/test/harness/scriptedAgentServer.js` starts
 * test/harness/fakeOpenAIServer.ts on 127.0.0.1, prints `EXPBENCH_AGENT_BASE_URL=<url>` (its
 * first stdout line), answers with the sequence that solves sample/toycal/0
 * (test/unit/agent.fixtures.ts `solvingScript`), and after the last scripted reply has been
 * requested (or on SIGINT/SIGTERM) checks every request it received for the ground truth
 * (`forbiddenStrings`: expected_outcome, requirements, design values, the masked script's lines)
 * and the API key, prints the result and exits 0 when none was seen, 1 otherwise.
 *
 *     node out/test/harness/scriptedAgentServer.js > /tmp/agent-url &
 *     EXPBENCH_AGENT_BASE_URL=$(sed -n 's/^EXPBENCH_AGENT_BASE_URL=//p' /tmp/agent-url) \
 *       node dist/cli.js agent run sample/toycal/0 --model scripted-agent --out /tmp/s1
 */
import { forbiddenStrings, groundTruthSeen, sampleTask, solvingScript } from '../unit/agent.fixtures';
import { FakeOpenAIServer } from './fakeOpenAIServer';

async function main(): Promise<void> {
  const forbidden = forbiddenStrings(await sampleTask());
  const script = solvingScript();
  const server = await new FakeOpenAIServer().start();
  server.enqueue(...script);
  server.handler = () => ({ status: 500, message: 'the scripted sequence is over' });
  console.log(`EXPBENCH_AGENT_BASE_URL=${server.baseURL}`);
  let done = false;
  const finish = async (): Promise<void> => {
    if (done) return;
    done = true;
    await new Promise((r) => setTimeout(r, 200)); // the last reply is written
    await server.close();
    const seen = groundTruthSeen(server, forbidden);
    const models = [...new Set(server.requests.map((q) => q.body?.model))].join(', ');
    console.log(`${server.count} requests (model ${models || '-'}), checked against ${forbidden.length} ground-truth strings and the key`);
    if (seen.length === 0) console.log('no ground truth seen: ok');
    else console.log(`GROUND TRUTH SEEN:\n${seen.join('\n')}`);
    process.exit(seen.length === 0 && server.count > 0 ? 0 : 1);
  };
  const timer = setInterval(() => { if (server.count >= script.length) void finish(); }, 100);
  timer.unref();
  process.on('SIGINT', () => void finish());
  process.on('SIGTERM', () => void finish());
  await new Promise<void>(() => undefined);
}

void main().catch((e: unknown) => { console.error(e); process.exit(1); });
