import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { removeWorkContainer } from '../../src/core/sandbox';
import { requireDocker } from '../harness/docker';
import { cli, OFFLINE_ENV, ROOT } from './cli.helpers';

/**
 * The README's command-line block ("## The command line") runs as written, in order (issue 15):
 * each line is run with `node dist/cli.js` from the repository root, `/tmp/s1` replaced by a
 * fresh temp folder (the only change), `export` lines setting the environment of the lines after
 * them. A command that needs a network endpoint (a URL, `--model`) would be skipped, saying so;
 * the judge runs without an endpoint (the heuristic pre-judge), as the README says it does.
 */
interface ReadmeCommand { line: number; text: string; args: string[]; env?: [string, string] }

/** The README's first bash block after "## The command line", one entry per command. */
export function readmeCommands(readme: string): ReadmeCommand[] {
  const lines = readme.split('\n');
  const head = lines.findIndex((l) => l.trim() === '## The command line');
  assert.ok(head >= 0, 'README has "## The command line"');
  const start = lines.findIndex((l, i) => i > head && l.trim() === '```bash');
  const end = lines.findIndex((l, i) => i > start && l.trim() === '```');
  const out: ReadmeCommand[] = [];
  for (let i = start + 1; i < end; i++) {
    const text = lines[i].replace(/\s+#\s.*$/, '').trim();
    if (!text) continue;
    const exp = /^export ([A-Z_]+)=(\S+)$/.exec(text);
    if (exp) { out.push({ line: i + 1, text, args: [], env: [exp[1], exp[2]] }); continue; }
    const words = text.split(/\s+/);
    assert.deepEqual(words.slice(0, 2), ['node', 'dist/cli.js'], `README line ${i + 1} runs the CLI: ${text}`);
    out.push({ line: i + 1, text, args: words.slice(2) });
  }
  return out;
}

/** Exit codes the README's comments promise for this sequence (the work is not done: E fails). */
function expectedCode(c: ReadmeCommand): number {
  return c.args[0] === 'verify' && c.args.includes('--check') ? 3 : 0;
}

describe('the README\'s command-line examples run as written (dist/cli.js)', function () {
  this.timeout(300_000);
  let docker: Docker;
  let tmp: string;
  before(async function () {
    docker = await requireDocker(this);
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-readme-'));
  });
  after(async () => { if (tmp) await fsp.rm(tmp, { recursive: true, force: true }); });

  it('shows a real answers file and a real harness-judge folder', async () => {
    const readme = await fsp.readFile(path.join(ROOT, 'README.md'), 'utf8');
    const commands = readmeCommands(readme);
    const submit = commands.find((c) => c.args[0] === 'session' && c.args[1] === 'submit')!;
    const answersFile = submit.args[submit.args.indexOf('--answers') + 1];
    const answers = JSON.parse(await fsp.readFile(path.join(ROOT, answersFile), 'utf8'));
    const shown = /`(\{"design": \[.*\], "conclusion": )"…"\}`/.exec(readme);
    assert.ok(shown, 'the README shows the answers file');
    assert.deepEqual(JSON.parse(`${shown[1]}""}`).design, answers.design, 'as it is');
    const report = commands.find((c) => c.args[0] === 'report')!;
    const folder = report.args.find((a) => a.includes('harness-judge'))!;
    assert.ok((await fsp.stat(path.join(ROOT, folder))).isDirectory(), folder);
    // Neither example holds the sample task's ground truth.
    const task = JSON.parse(await fsp.readFile(path.join(ROOT, 'samples/exp-bench/tasks/sample/toycal/toycal_complete_final.json'), 'utf8')).questions[0];
    const examples = [JSON.stringify(answers), ...await Promise.all((await fsp.readdir(path.join(ROOT, folder), { recursive: true }))
      .filter((f) => f.endsWith('.json')).map((f) => fsp.readFile(path.join(ROOT, folder, f), 'utf8')))];
    for (const number of ['1.3', '0.032', '0.012', '0.905']) for (const e of examples) assert.ok(!e.includes(number), `example holds ${number}`);
    assert.ok(!examples.some((e) => e.includes(task.expected_outcome.slice(0, 40))));
  });

  it('runs every command in order with the exit codes the README gives', async () => {
    const readme = await fsp.readFile(path.join(ROOT, 'README.md'), 'utf8');
    const session = path.join(tmp, 's1');
    const env: NodeJS.ProcessEnv = { ...OFFLINE_ENV };
    const ran: string[] = [];
    try {
      for (const c of readmeCommands(readme)) {
        if (c.env) { env[c.env[0]] = c.env[1]; continue; }
        if (/https?:\/\/|git@|--model\b/.test(c.text)) {
          console.log(`      (README line ${c.line} skipped: needs a network endpoint: ${c.text})`);
          continue;
        }
        const args = c.args.map((a) => a.replace(/^\/tmp\/s1\b/, session));
        const r = await cli(args, { env });
        assert.equal(r.code, expectedCode(c), `README line ${c.line}: ${c.text}\n${r.stderr.slice(-2000)}`);
        ran.push(c.args.slice(0, 2).join(' '));
        if (c.args[0] === 'tasks' && c.args[1] === 'validate') {
          const j = JSON.parse(r.stdout);
          assert.ok(j.tasks.length > 100 && j.tasks.every((t: { id: string }) => !t.id.startsWith('sample/')), 'the folder\'s tasks only');
        }
        if (c.args[0] === 'session') assert.match(r.stdout, new RegExp(`^submitted ${session} after`, 'm'));
        if (c.args[0] === 'judge') assert.equal(JSON.parse(r.stdout).kind, 'heuristic');
        if (c.args[0] === 'report' && c.args.includes('--figures')) {
          const out = args[args.indexOf('--figures') + 1];
          for (const f of ['table.csv', 'report.html', 'funnel.svg', 'funnel.vl.json']) assert.ok((await fsp.stat(path.join(out, f))).size > 0, `${out}/${f}`);
        } else if (c.args[0] === 'report') {
          const j = JSON.parse(r.stdout);
          assert.deepEqual(j.rows.map((x: { group: string; kind: string }) => `${x.group} ${x.kind}`).sort(), ['example-agent/example-model llm', 's1 heuristic']);
        }
      }
      assert.deepEqual(ran, ['tasks validate', 'tasks show', 'prepare sample/toycal/0', 'patch /tmp/s1', 'session submit', 'verify /tmp/s1', 'judge /tmp/s1', 'report /tmp/s1', 'report /tmp/s1']);
    } finally {
      const manifest = JSON.parse(await fsp.readFile(path.join(session, 'private', 'manifest.json'), 'utf8').catch(() => '{}'));
      if (manifest.sessionId) await removeWorkContainer(docker, manifest.sessionId).catch(() => undefined);
    }
  });
});
