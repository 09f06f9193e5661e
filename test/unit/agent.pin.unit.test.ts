/**
 * `expbench agent run` without `--source` on a task whose paper list names no repository but whose
 * curation file pins one (issue 33, item 9): it refused ("no code_url … pass --source") although
 * docs/curation.md says the pin is used by every solver. Now the session is prepared at the pin (the
 * pinned commit, not the repository's HEAD) and the agent runs on it. Through `node dist/cli.js`,
 * the agent's endpoint a local server the test starts (test/harness/fakeOpenAIServer.ts), the real
 * work container.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { readManifest } from '../../src/core/workspace/manifest';
import { paperRepo, writePaper } from '../harness/curationFixture';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { cli, OFFLINE_ENV } from './cli.helpers';

describe('agent run uses the curation file\'s pin when no --source is given (dist/cli.js)', function () {
  this.timeout(180_000);
  let docker: Docker;
  let dir: string;
  let server: FakeOpenAIServer;
  const sessions: string[] = [];
  before(async function () {
    docker = await requireDocker(this);
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-agent-pin-'));
    server = await new FakeOpenAIServer().start();
  });
  after(async () => {
    await server?.close();
    if (docker) await assertNoContainers(docker, sessions);
    if (dir) await fsp.rm(dir, { recursive: true, force: true });
  });

  it('prepares at the pinned commit (not HEAD), runs the agent, and records the pin', async () => {
    const repo = await paperRepo(path.join(dir, 'paper-repo'));
    const pinned = await repo.commit({ 'train.py': 'print("train")\n', 'version.txt': 'pinned\n' }, 'the commit the tasks were made at');
    await repo.commit({ 'version.txt': 'later\n' }, 'a later commit');
    const ds = path.join(dir, 'ds');
    await writePaper(ds, 'conf/7', {
      questions: [{ question: 'Does training help?', method: 'train', expected_outcome: 'yes', masked_source: ['/workspace/train.py'], source: ['/workspace/train.py'] }],
      curation: { version: 1, paper: 'conf/7', repository: { url: repo.dir, commit: pinned } },
    });
    // One reply that reads the workspace's version file, then the endpoint refuses: the run ends as a model error.
    server.enqueue({ toolCalls: [{ name: 'read_file', arguments: { path: 'version.txt' } }] });
    server.handler = () => ({ status: 400, message: 'the scripted sequence is over' });
    const out = path.join(dir, 's1');
    sessions.push(path.basename(out));
    const r = await cli(['agent', 'run', 'conf/7/0', '--dataset', ds, '--no-sample', '--cache', path.join(dir, 'cache'), '--model', 'scripted-agent',
      '--out', out, '--no-verify', '--no-judge', '--json'], { env: { ...OFFLINE_ENV, EXPBENCH_AGENT_BASE_URL: server.baseURL } });
    assert.doesNotMatch(r.stderr, /pass --source/);
    assert.equal(r.code, 1, `the run stops with the endpoint's refusal: ${r.stderr.slice(-600)}`);
    const result = JSON.parse(r.stdout) as { agent: { stop: string; toolCalls: number } };
    assert.equal(result.agent.stop, 'model_error');
    assert.equal(result.agent.toolCalls, 1);
    const m = await readManifest(out);
    assert.equal(m.commit, pinned);
    assert.equal(m.pin?.from, 'curation');
    assert.equal(await fsp.readFile(path.join(out, 'workspace', 'version.txt'), 'utf8'), 'pinned\n');
    const toolReply = (server.requests[1].body.messages as Array<{ role: string; content: string }>).find((x) => x.role === 'tool');
    assert.match(toolReply?.content ?? '', /pinned/, 'the agent read the pinned tree');
  });

  it('with neither a pin nor a code_url, says what to give (naming the task)', async () => {
    const ds = path.join(dir, 'ds-nopin');
    await writePaper(ds, 'conf/8', { questions: [{ question: 'q', method: 'm', expected_outcome: 'e' }] });
    const r = await cli(['agent', 'run', 'conf/8/0', '--dataset', ds, '--no-sample', '--model', 'm', '--out', path.join(dir, 's2')],
      { env: { ...OFFLINE_ENV, EXPBENCH_AGENT_BASE_URL: server.baseURL } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^expbench: conf\/8\/0: .*no curation file pins a repository.*--source/m);
  });
});
