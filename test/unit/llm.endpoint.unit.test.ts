import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { endpointFromEnv as judgeEndpointFromEnv } from '../../src/cli/commands/judge';
import { isExpBenchError } from '../../src/core/errors';
import { endpointFrom, endpointFromEnv } from '../../src/core/llm/endpoint';
import { parsePriceTable, readPriceTable } from '../../src/core/llm/ledger';

describe('llm: named endpoints from the environment and the price table', () => {
  it('reads the judge endpoint as the CLI always did: OPENAI_* with EXPBENCH_JUDGE_MODEL', () => {
    const env = { OPENAI_API_KEY: 'sk-openai-key-1', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_ORG_ID: 'org-1', EXPBENCH_JUDGE_MODEL: 'judge-m' };
    assert.deepEqual(endpointFromEnv('judge', env), {
      name: 'judge', baseURL: 'http://127.0.0.1:9/v1', apiKey: 'sk-openai-key-1', organization: 'org-1', model: 'judge-m',
    });
    assert.deepEqual(judgeEndpointFromEnv(env, 5000), { ...endpointFromEnv('judge', env), timeoutMs: 5000 }, 'the CLI goes through the same function');
    assert.equal(endpointFromEnv('judge', { ...env, EXPBENCH_JUDGE_BASE_URL: 'http://judge/v1' })?.baseURL, 'http://judge/v1');
  });

  it('gives the agent its own variables, each falling back to the OPENAI_* one, and its own model', () => {
    const shared = { OPENAI_API_KEY: 'sk-openai-key-1', OPENAI_BASE_URL: 'http://shared/v1', EXPBENCH_JUDGE_MODEL: 'judge-m', EXPBENCH_AGENT_MODEL: 'agent-m' };
    assert.deepEqual(endpointFromEnv('agent', shared), { name: 'agent', baseURL: 'http://shared/v1', apiKey: 'sk-openai-key-1', organization: undefined, model: 'agent-m' });
    const own = { ...shared, EXPBENCH_AGENT_BASE_URL: 'http://agent/v1', EXPBENCH_AGENT_API_KEY: 'sk-agent-key-2', EXPBENCH_AGENT_ORG_ID: 'org-a' };
    assert.deepEqual(endpointFromEnv('agent', own), { name: 'agent', baseURL: 'http://agent/v1', apiKey: 'sk-agent-key-2', organization: 'org-a', model: 'agent-m' });
    assert.equal(endpointFromEnv('judge', own)?.apiKey, 'sk-openai-key-1', "the agent's key is not the judge's");
    assert.equal(endpointFromEnv('judge', own)?.model, 'judge-m');
  });

  it('has no endpoint without a key or a URL, a placeholder key for a local URL, and names the missing model', () => {
    assert.equal(endpointFromEnv('judge', { EXPBENCH_JUDGE_MODEL: 'm', EXPBENCH_AGENT_API_KEY: 'sk-agent-key-2' }), undefined);
    assert.equal(endpointFromEnv('agent', { EXPBENCH_AGENT_BASE_URL: 'http://local/v1', EXPBENCH_AGENT_MODEL: 'm' })?.apiKey, 'no-key');
    assert.throws(() => endpointFromEnv('agent', { OPENAI_API_KEY: 'sk-openai-key-1', EXPBENCH_JUDGE_MODEL: 'judge-m' }),
      (e) => isExpBenchError(e, 'BAD_INPUT') && e.input === 'EXPBENCH_AGENT_MODEL');
    assert.throws(() => endpointFrom('judge', { apiKey: 'k' }, 'expbench.judge.model'),
      (e) => isExpBenchError(e, 'BAD_INPUT') && e.input === 'expbench.judge.model');
  });

  it('checks a price table and names where it came from', async () => {
    const table = { 'judge-m': { inputPerMTok: 2, outputPerMTok: 8 } };
    assert.deepEqual(parsePriceTable(table, 'expbench.llm.prices'), table);
    assert.throws(() => parsePriceTable({ 'judge-m': { input: 2, output: 8 } }, 'expbench.llm.prices'),
      (e) => isExpBenchError(e, 'BAD_INPUT') && e.input === 'expbench.llm.prices' && /judge-m/.test(e.message));
    assert.throws(() => parsePriceTable({ m: { inputPerMTok: -1, outputPerMTok: 1 } }, 'x'), (e) => isExpBenchError(e, 'BAD_INPUT'));
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-prices-'));
    try {
      const good = path.join(dir, 'prices.json');
      await fsp.writeFile(good, JSON.stringify(table));
      assert.deepEqual(await readPriceTable(good), table);
      const bad = path.join(dir, 'bad.json');
      await fsp.writeFile(bad, '{"m": ');
      await assert.rejects(readPriceTable(bad), (e) => isExpBenchError(e, 'BAD_INPUT') && e.input === bad);
      await assert.rejects(readPriceTable(path.join(dir, 'missing.json')), (e) => isExpBenchError(e, 'BAD_INPUT'));
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });
});
