import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SessionLayout } from '../../src/core/layout';
import { ReviewStore, runKeyForSession } from '../../src/core/review';
import { agreementVariants, buildAgreementSession } from './agreementSessions';
import { repoRoot } from './paths';

/**
 * Rebuilds test/data/agreement/ (docs/curation.md "Judge agreement"):
 *   node out/test/harness/buildAgreementData.js test/data/agreement/labels.json
 * builds the four sample sessions (agreementSessions.ts) in a temp folder, keeps of each the files
 * the agreement and the labeller read (manifest, task snapshot, answers, patch, judge record) under
 * test/data/agreement/sessions/<name>/private/ (paths in the checkout or the build's temporary folder
 * written relative to them), and writes LABELS.json (the labeller's verdicts,
 * `{labelledBy, sessions: {<name>: {<item>: [label, reason]}}}`) as review-store judgements of kind
 * `verdict-flip` under test/data/agreement/review/.
 */
async function main(): Promise<void> {
  const labelsFile = process.argv[2];
  if (!labelsFile) throw new Error('usage: buildAgreementData.js LABELS.json');
  const labels = JSON.parse(await fsp.readFile(labelsFile, 'utf8')) as { labelledBy: string; sessions: Record<string, Record<string, [string, string]>> };
  const out = path.join(repoRoot, 'test', 'data', 'agreement');
  for (const d of ['sessions', 'review']) await fsp.rm(path.join(out, d), { recursive: true, force: true });
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-agreement-'));
  const store = new ReviewStore(path.join(out, 'review'));
  for (const v of await agreementVariants()) {
    const built = await buildAgreementSession(tmp, path.join(tmp, 'cache'), v);
    const from = new SessionLayout(built.root);
    const to = new SessionLayout(path.join(out, 'sessions', v.name));
    for (const [a, b] of [
      [from.manifest, to.manifest], [path.join(from.private, 'task.json'), path.join(to.private, 'task.json')], [from.answers, to.answers],
      [path.join(from.judge, 'latest.json'), path.join(to.judge, 'latest.json')], [path.join(from.harness, 'patch.diff'), path.join(to.harness, 'patch.diff')],
    ]) {
      await fsp.mkdir(path.dirname(b), { recursive: true });
      // no machine paths in the data: the checkout's and the build folder's paths become relative to them
      const text = (await fsp.readFile(a, 'utf8')).split(`${repoRoot}${path.sep}`).join('').split(`${tmp}${path.sep}`).join('');
      await fsp.writeFile(b, text);
    }
    const run = await runKeyForSession(to.root);
    const mine = labels.sessions[v.name] ?? {};
    for (const [item, [label, reason]] of Object.entries(mine)) {
      await store.add({ subject: { kind: 'item', task: built.record.taskId, item, run }, kind: 'verdict-flip', value: { verdict: label }, reason, by: labels.labelledBy });
    }
    console.log(`${v.name}: ${run}, ${Object.keys(mine).length} labels`);
  }
  await fsp.rm(tmp, { recursive: true, force: true });
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
