/**
 * A campaign of two people × two tasks of the run-set fixture paper (fixture2026/90001) with real
 * sessions: planned and written by the core (`campaign create`'s functions), each session prepared
 * by prepareTask and worked through the session service as the proctored window's host channel
 * does (client `solver`, the host's clock injected): ana attests, works 20 min, pauses 45 min,
 * works 10 min and submits task 0 (judged by the heuristic pre-judge), works 5 min on task 1 and
 * pauses; bo attests and works 12 min on task 0 (still running at `now`), and never opens task 1.
 * Used by the VS Code, e2e and results tests of issue 32; nothing of it is committed.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { createCampaign, planCampaign, readCampaignSpec } from '../../src/core/campaigns';
import { ATTESTATION_RULES } from '../../src/core/channel/protocol';
import { CHANNEL_CLIENT } from '../../src/core/flows/baselineChannel';
import { judgeStep } from '../../src/core/flows/judge';
import { prepareTask } from '../../src/core/flows/prepareTask';
import { SessionService } from '../../src/core/flows/sessionService';
import { foldRunSet, readRunSet, RunSetLayout, type RunSetView } from '../../src/core/runs';
import { buildRunSetFixture } from './runSetFixture';

export const CAMPAIGN_START = Date.parse('2026-12-01T10:00:00Z');
const MIN = 60_000;

/** The spec of the fixture campaign (`datasets` relative to the spec's folder). */
export const campaignSpecText = (extra = '') => `{
  "version": 1,
  "name": "pilot baseline, two people",
  "datasets": ["exp-bench"],
  "tasks": ["fixture2026/90001/0", "fixture2026/90001/1"],
  "baseline": {
    "baseliners": [{"id": "ana", "name": "Ana Ruiz", "email": "ana@example.org"}, {"id": "bo"}],
    "assignment": "balanced"${extra}
  }
}`;

export interface CampaignFixture {
  /** The campaign's folder (a run set's). */
  dir: string;
  view: RunSetView;
  dataset: string;
  /** The host's time at the end of the scenario (bo's clock still runs then). */
  now: number;
}

/**
 * Builds the dataset under `tmp`, writes the campaign into `tmp/<name>` and works its sessions
 * as above. `judge`: judge ana's submission (heuristic pre-judge; default true).
 */
export async function buildCampaignWithSessions(tmp: string, o: { name?: string; judge?: boolean; specExtra?: string } = {}): Promise<CampaignFixture> {
  const dataset = await buildRunSetFixture(tmp, 2);
  const file = path.join(tmp, 'campaign.jsonc');
  await fsp.writeFile(file, campaignSpecText(o.specExtra));
  const { spec, text } = await readCampaignSpec(file);
  const plan = await planCampaign(spec);
  const dir = path.join(tmp, o.name ?? 'campaign');
  await createCampaign(dir, spec, text, file, plan);
  const layout = new RunSetLayout(dir);
  const view = foldRunSet((await readRunSet(layout.state))!.records)!;
  const unit = (person: string, i: number) => view.units.find((u) => u.name === `fixture2026-90001-${i}.${person}.a1`)!;
  const taskOf = (id: string) => plan.loaded.tasks.find((t) => t.id === id)!;
  let t = CAMPAIGN_START;
  const now = () => t;
  const service = new SessionService();
  const open = async (person: string, i: number) => {
    const u = unit(person, i);
    await prepareTask({ task: taskOf(u.task), outDir: layout.session(u.dir), cacheDir: path.join(tmp, 'cache') });
    return service.open(layout.session(u.dir), { client: CHANNEL_CLIENT, taskId: u.task, now, delayMs: 10, draftQuietMs: 5 });
  };
  const attest = (h: Awaited<ReturnType<typeof open>>, who: string) => h.record({ type: 'baseliner.attested', baseliner: who, rules: [...ATTESTATION_RULES], aiAllowed: false, client: CHANNEL_CLIENT });
  const aiOff = (h: Awaited<ReturnType<typeof open>>) => h.record({ type: 'ai.settings', off: true, allowed: false, settings: {}, source: 'host' });

  const a0 = await open('ana', 0);
  await attest(a0, 'Ana Ruiz');
  await aiOff(a0);
  await a0.startClock();
  await a0.setPhase('implementation');
  t += 20 * MIN;
  await a0.pauseClock('lunch');
  t += 45 * MIN;
  await a0.resumeClock();
  t += 10 * MIN;
  await a0.submit({
    design: 'Independent: temperature scaling (T = 1 vs the fitted T). Dependent: ECE (15 bins), accuracy, the fitted T. Constant: the model, the test split.',
    conclusion: 'Yes: temperature scaling lowers the ECE (0.032 to 0.012) and leaves the accuracy unchanged (0.905); the fitted T is about 1.3.',
  }, o.judge === false ? {} : { judge: judgeStep({ task: taskOf(unit('ana', 0).task) }) });
  await a0.release();
  const a1 = await open('ana', 1);
  await aiOff(a1);
  await a1.startClock();
  t += 5 * MIN;
  await a1.pauseClock('break');
  await a1.release();
  const b0 = await open('bo', 0);
  await attest(b0, 'bo');
  await aiOff(b0);
  await b0.startClock();
  t += 12 * MIN;
  b0.touch(); // the heartbeat: a reader that does not own the session counts up to here
  await b0.release(); // a clean close: the segment is closed at this moment (bo stays "paused" then)
  return { dir, view, dataset, now: t };
}
