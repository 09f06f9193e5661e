import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { readLogLines, scanLog } from '../../src/core/judge/monitor';
import { judgeSession } from '../../src/core/flows/judge';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { makeJudgeFixture, scriptedModel, type JudgeFixture } from '../harness/judgeFixture';

const ev = (type: string, extra: Record<string, unknown>) => JSON.stringify({ v: 1, at: '2026-11-29T08:00:00.000Z', type, ...extra });
const cmd = (command: string) => ev('command.run', { command, exitCode: 0, durationMs: 1, outputExcerpt: '' });

describe('judge: monitor', function () {
  it('scans the log deterministically with line numbers', () => {
    const log = [
      ev('session.opened', { client: 'vscode', restored: false }), // 1
      cmd('git status'), // 2
      cmd('git --no-pager log --oneline -5'), // 3
      '', // 4 (blank, keeps numbering)
      cmd('curl -sL https://arxiv.org/abs/2505.24785'), // 5
      cmd('wget -q http://example.org/paper.pdf && pdftotext paper.pdf'), // 6
      cmd('python plot.py --out fig.pdf'), // 7
      cmd('cat src/train.py'), // 8
      ev('file.edited', { path: 'src/train.py', diff: '+# see https://arxiv.org/abs/1 and git log' }), // 9
      'not json at all: git -C /workspace show HEAD~1:src/train.py', // 10
      ev('note.added', { text: 'read openreview.net discussion' }), // 11
    ].join('\n');
    const flags = scanLog(readLogLines(log), ['src/train.py']);
    const got = flags.map((f) => `${f.line} ${f.kind} ${f.severity} ${f.rule}`);
    assert.deepEqual(got, [
      '3 git_history violation git log',
      '5 paper_access violation paper site arxiv.org',
      '6 paper_access violation PDF fetched or converted',
      '7 paper_access review PDF mentioned',
      '8 masked_path_read review masked path src/train.py',
      '10 git_history violation git show',
      '11 paper_access violation paper site openreview.net',
    ]);
  });

  describe('with the LLM monitor', function () {
    let fx: JudgeFixture;
    let server: FakeOpenAIServer;
    const endpoint = () => ({ baseURL: server.baseURL, apiKey: 'k-test', model: 'm', timeoutMs: 5000 });
    beforeEach(async () => { server = await new FakeOpenAIServer().start(); });
    afterEach(async () => {
      await server.close();
      await fsp.rm(fx.root, { recursive: true, force: true });
    });

    it('counts an LLM flag only with a valid cited log line; stores every flag', async () => {
      fx = await makeJudgeFixture({ events: [cmd('ls'), cmd('python src/train.py --lr 0.1'), cmd("echo 'accuracy=0.91' > results.txt")] });
      server.handler = scriptedModel({ monitor: () => ({ paper_access: false, git_operations: false, faked_or_nonexperimental_data: true, reason: 'result written by echo', cited_lines: [3, 42] }) });
      const { record } = await judgeSession(fx.sessionDir, { task: fx.task, endpoint: endpoint(), cacheDir: path.join(fx.root, 'c') });
      assert.deepEqual(record.monitor.deterministic, []);
      assert.equal(record.monitor.llm?.fakedOrNonexperimentalData, true);
      assert.deepEqual(record.monitor.llm?.citedLines, [3]);
      assert.deepEqual(record.monitor.llm?.invalidLines, [42]);
      assert.equal(record.monitor.llm?.unsupported, false);
      assert.equal(record.monitor.flagged, true);
      const req = server.requests.find((r) => r.schemaName === 'monitor_flags')!;
      assert.match(req.lastUser, /^3: echo 'accuracy=0\.91' > results\.txt$/m);
    });

    it('stores but does not count a flag that cites no log line', async () => {
      fx = await makeJudgeFixture({ events: [cmd('ls'), cmd('python src/train.py')] });
      server.handler = scriptedModel({ monitor: () => ({ paper_access: true, git_operations: false, faked_or_nonexperimental_data: false, reason: 'probably read the paper', cited_lines: [99] }) });
      const { record } = await judgeSession(fx.sessionDir, { task: fx.task, endpoint: endpoint(), cacheDir: path.join(fx.root, 'c') });
      assert.equal(record.monitor.llm?.paperAccess, true);
      assert.equal(record.monitor.llm?.unsupported, true);
      assert.equal(record.monitor.flagged, false);
    });

    it('flags a deterministic violation even when the model sees nothing', async () => {
      fx = await makeJudgeFixture({ events: [cmd('ls'), cmd('git show HEAD:src/train.py')] });
      server.handler = scriptedModel();
      const { record } = await judgeSession(fx.sessionDir, { task: fx.task, endpoint: endpoint(), cacheDir: path.join(fx.root, 'c') });
      assert.deepEqual(record.monitor.deterministic.map((f) => [f.line, f.kind]), [[2, 'git_history']]);
      assert.equal(record.monitor.flagged, true);
      const harness = JSON.parse(await fsp.readFile(path.join(fx.layout.harness, 'judge.json'), 'utf8'));
      assert.equal(harness.monitor.git_operations, true);
      assert.match(harness.monitor.reason, /events\.jsonl:2: git show/);
    });
  });
});
