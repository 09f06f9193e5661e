import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import {
  balancedAssignment, campaignBoard, maskSights, repositoryKey, campaignKey, campaignLinks, campaignTimesheet, CampaignLog, createCampaign, fixedAssignment, linkStates,
  parseCampaignSpec, personOfToken, personTasks, planCampaign, readCampaignSpec, reissueLink, revokeLink, startCampaignFront, timesheetCsv, type AssignableTask,
} from '../../src/core/campaigns';
import { isExpBenchError } from '../../src/core/errors';
import { CHANNEL_CLIENT } from '../../src/core/flows/baselineChannel';
import { prepareTask } from '../../src/core/flows/prepareTask';
import { SessionService } from '../../src/core/flows/sessionService';
import { foldRunSet, readRunSet, RunSetLayout } from '../../src/core/runs';
import { ATTESTATION_RULES } from '../../src/core/channel/protocol';
import { buildRunSetFixture } from '../harness/runSetFixture';
import { cli, OFFLINE_ENV } from './cli.helpers';

const SPEC = (baseline: string, extra = '') => `{
  // two people, two tasks of the fixture paper
  "version": 1,
  "name": "fixture campaign",
  "datasets": ["exp-bench"],
  "tasks": ["fixture2026/90001/0", "fixture2026/90001/1"],
  "baseline": ${baseline},${extra}
}`;
const TWO = '{"baseliners": [{"id": "ana", "name": "Ana Ruiz", "email": "ana@example.org"}, {"id": "bo"}], "assignment": "balanced"}';
const KEY = 'k'.repeat(40);

const badSpec = (text: string, re: RegExp) => assert.throws(() => parseCampaignSpec(text, '/x/campaign.jsonc'),
  (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && re.test((e as Error).message) && (e as Error).message.startsWith('/x/campaign.jsonc'));

describe('baseline campaigns (src/core/campaigns): spec and assignment', () => {
  it('reads a campaign spec and names the field of a bad one', () => {
    const s = parseCampaignSpec(SPEC(TWO), '/x/campaign.jsonc');
    assert.deepEqual(s.datasets, ['/x/exp-bench']);
    assert.deepEqual(s.baseline.baseliners.map((b) => b.id), ['ana', 'bo']);
    badSpec(SPEC(TWO, ' "agents": []'), /Unrecognized key: "agents"/);
    badSpec(SPEC('{"baseliners": [{"id": "ana"}, {"id": "ana"}], "assignment": "balanced"}'), /\/baseline\/baseliners: two baseliners have the id ana/);
    badSpec(SPEC('{"baseliners": [{"id": "ana"}], "assignment": "fixed"}'), /assignment "fixed" needs "fixed"/);
    badSpec(SPEC('{"baseliners": [{"id": "ana"}], "assignment": "fixed", "fixed": {"cy": ["a/b/c"]}}'), /\/baseline\/fixed\/cy: cy is not among the baseliners/);
    badSpec(SPEC('{"baseliners": [{"id": "../x"}], "assignment": "balanced"}'), /\/baseline\/baseliners\/0\/id: must be 1-64 letters/);
    badSpec(SPEC('{"baseliners": [{"id": "ana", "email": "not mail"}], "assignment": "balanced"}'), /email: must be an e-mail address/);
  });

  const tasksOf = (papers: number[]): AssignableTask[] => papers.flatMap((n, p) => Array.from({ length: n }, (_, i) => ({ id: `c/p${p}/${i}`, paper: `c/p${p}` })));

  it('balanced: every person the same number of tasks, none twice; each task given to ⌊nk/m⌋ or ⌈nk/m⌉ people (property test)', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 20 }), (papers, n, kRaw) => {
      const tasks = tasksOf(papers);
      const k = 1 + (kRaw % tasks.length);
      const people = Array.from({ length: n }, (_, i) => `p${i}`);
      const a = balancedAssignment(people, tasks, k);
      for (const p of people) {
        const mine = a.filter((x) => x.person === p).map((x) => x.task);
        if (mine.length !== k || new Set(mine).size !== k) return false;
      }
      const counts = tasks.map((t) => a.filter((x) => x.task === t.id).length);
      if (Math.max(...counts) - Math.min(...counts) > 1) return false;
      return JSON.stringify(a) === JSON.stringify(balancedAssignment(people, tasks, k)); // deterministic
    }), { numRuns: 500 });
  });

  it('balanced: with equal papers and k at most the number of papers, each person\'s tasks come from k different papers (property test)', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 6 }), (np, per, n, kRaw) => {
      const tasks = tasksOf(Array(np).fill(per));
      const k = 1 + ((kRaw - 1) % np);
      const a = balancedAssignment(Array.from({ length: n }, (_, i) => `p${i}`), tasks, k);
      return Array.from({ length: n }, (_, i) => `p${i}`).every((p) => new Set(a.filter((x) => x.person === p).map((x) => x.task.split('/')[1])).size === k);
    }), { numRuns: 300 });
  });

  it('balanced refuses more tasks per person than selected; fixed resolves globs and names what is wrong', () => {
    const tasks = tasksOf([2, 1]);
    assert.throws(() => balancedAssignment(['a'], tasks, 4), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /4 tasks per person, but the spec selects 3 task/.test((e as Error).message));
    assert.deepEqual(fixedAssignment(['a', 'b'], tasks, { a: ['c/p0/*', 'c/p0/1'], b: ['c/p1/0'] }), [
      { person: 'a', task: 'c/p0/0' }, { person: 'a', task: 'c/p0/1' }, { person: 'b', task: 'c/p1/0' },
    ]);
    assert.throws(() => fixedAssignment(['a'], tasks, { a: ['c/p9/*'] }), (e: unknown) => /baseline\.fixed\.a: c\/p9\/\*: matches none/.test((e as Error).message));
    assert.throws(() => fixedAssignment(['a', 'b'], tasks, { a: ['c/p0/0'] }), (e: unknown) => /baseline\.fixed\.b: this baseliner has no task/.test((e as Error).message));
  });
});

describe('baseline campaigns: nobody sees one task\'s masked files in another task\'s workspace', function () {
  this.timeout(120_000);
  const t = (id: string, masked: string[], repository?: string): AssignableTask => ({ id, paper: id.split('/').slice(0, 2).join('/'), masked, ...(repository ? { repository } : {}) });

  it('maskSights: a pair of one paper (or one repository) with different masks, both ways; equal or covering masks and other papers are not', () => {
    const tasks = [t('c/p/0', ['a/x.py']), t('c/p/1', ['b/y.py']), t('c/p/2', ['a']), t('c/q/0', ['z.py'], 'https://r'), t('d/q2/0', ['w.py'], 'https://r'), t('c/p/3', ['a/x.py'])];
    const of = (...ids: string[]) => maskSights(ids.map((task) => ({ person: 'ana', task })), tasks).map((s) => `${s.sees} shows ${s.task}'s ${s.path}`);
    assert.deepEqual(of('c/p/0', 'c/p/1'), ['c/p/1 shows c/p/0\'s a/x.py', 'c/p/0 shows c/p/1\'s b/y.py']);
    assert.deepEqual(of('c/p/0', 'c/p/3'), [], 'the same mask: each workspace is the other\'s');
    assert.deepEqual(of('c/p/0', 'c/p/2'), ['c/p/0 shows c/p/2\'s a'], 'a/x.py is under the folder a that c/p/2 masks; the rest of a is in c/p/0\'s workspace');
    assert.deepEqual(of('c/p/0', 'c/q/0'), [], 'other papers, other repositories');
    assert.deepEqual(of('c/q/0', 'd/q2/0').length, 2, 'two papers of one code_url');
    assert.deepEqual(maskSights([{ person: 'ana', task: 'c/p/0' }, { person: 'bo', task: 'c/p/1' }], tasks), [], 'two people');
  });

  it('repositoryKey: one repository however its URL is written; folders by their absolute path', () => {
    const one = ['https://github.com/x/toycal', 'https://GitHub.com/x/Toycal.git/', 'git@github.com:x/toycal.git', 'ssh://git@github.com/x/toycal', 'http://github.com/x/toycal/', 'ssh://git@github.com:22/x/toycal.git'];
    assert.deepEqual(new Set(one.map(repositoryKey)), new Set(['url:github.com/x/toycal']));
    assert.notEqual(repositoryKey('https://github.com/x/toycal2'), repositoryKey('https://github.com/x/toycal'));
    assert.equal(repositoryKey('/a/b/../repo/'), repositoryKey('/a/repo'));
  });

  it('two papers prepared from one repository (the same local_repo, no code_url) are compared too', async () => {
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-campaigns-mask2-'));
    try {
      const dataset = await buildRunSetFixture(tmp, 1);
      const papers = path.join(dataset, 'papers', 'fixture2026.jsonl');
      const first = JSON.parse((await fsp.readFile(papers, 'utf8')).trim());
      await fsp.appendFile(papers, JSON.stringify({ ...first, id: '90002', code_url: '' }) + '\n');
      const task = JSON.parse(await fsp.readFile(path.join(dataset, 'tasks', 'fixture2026', '90001', '90001_complete_final.json'), 'utf8'));
      task.questions[0].masked_source = ['toycal/metrics.py'];
      await fsp.mkdir(path.join(dataset, 'tasks', 'fixture2026', '90002'), { recursive: true });
      await fsp.writeFile(path.join(dataset, 'tasks', 'fixture2026', '90002', '90002_complete_final.json'), JSON.stringify(task));
      const spec = path.join(tmp, 'campaign.jsonc');
      await fsp.writeFile(spec, SPEC('{"baseliners": [{"id": "ana"}], "assignment": "balanced"}').replace('"fixture2026/90001/1"', '"fixture2026/90002/0"'));
      const r = await cli(['campaign', 'create', spec, '--out', path.join(tmp, 'c')], { env: OFFLINE_ENV });
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stderr, /ana: fixture2026\/90002\/0's workspace holds experiments\/temperature_scaling\.py, which fixture2026\/90001\/0 masks/);
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  });

  it('campaign create refuses such an assignment naming the person, the tasks and the path, writes nothing; one task per person passes', async () => {
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-campaigns-mask-'));
    try {
      const dataset = await buildRunSetFixture(tmp, 2);
      // task 1 masks another script of the same repository than task 0 (as the tasks of a real paper do)
      const file = path.join(dataset, 'tasks', 'fixture2026', '90001', '90001_complete_final.json');
      const data = JSON.parse(await fsp.readFile(file, 'utf8'));
      data.questions[1].masked_source = ['/workspace/toycal/metrics.py'];
      await fsp.writeFile(file, JSON.stringify(data));
      const spec = path.join(tmp, 'campaign.jsonc');
      await fsp.writeFile(spec, SPEC(TWO));
      const r = await cli(['campaign', 'create', spec, '--out', path.join(tmp, 'c')], { env: OFFLINE_ENV });
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stderr, /ana: fixture2026\/90001\/1's workspace holds experiments\/temperature_scaling\.py, which fixture2026\/90001\/0 masks/);
      assert.match(r.stderr, /ana: fixture2026\/90001\/0's workspace holds toycal\/metrics\.py, which fixture2026\/90001\/1 masks/);
      assert.match(r.stderr, /bo: /);
      assert.ok(!(await fsp.stat(path.join(tmp, 'c')).catch(() => undefined)), 'nothing written');
      await fsp.writeFile(spec, SPEC(TWO.replace('"assignment": "balanced"', '"assignment": "balanced", "perPerson": {"tasks": 1}')));
      const ok = await cli(['campaign', 'create', spec, '--out', path.join(tmp, 'c')], { env: OFFLINE_ENV });
      assert.equal(ok.code, 0, ok.stderr);
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  });
});

describe('baseline campaigns (src/core/campaigns): a campaign on real files', function () {
  this.timeout(120_000);
  let tmp: string;
  let dir: string;

  beforeEach(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-campaigns-'));
    await buildRunSetFixture(tmp, 2);
    dir = path.join(tmp, 'campaign');
  });
  afterEach(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  async function create(baseline = TWO) {
    const file = path.join(tmp, 'campaign.jsonc');
    await fsp.writeFile(file, SPEC(baseline));
    const { spec, text } = await readCampaignSpec(file);
    const plan = await planCampaign(spec);
    return { spec, plan, created: await createCampaign(dir, spec, text, file, plan) };
  }
  const view = async () => foldRunSet((await readRunSet(new RunSetLayout(dir).state))!.records)!;

  it('writes the assignment into the run set before anything is served, and refuses a spec that changes it', async () => {
    const { created } = await create();
    assert.equal(created.created, true);
    const v = await view();
    assert.deepEqual(v.units.map((u) => [u.name, u.actor.kind, u.status]), [
      ['fixture2026-90001-0.ana.a1', 'human', 'pending'], ['fixture2026-90001-1.ana.a1', 'human', 'pending'],
      ['fixture2026-90001-0.bo.a1', 'human', 'pending'], ['fixture2026-90001-1.bo.a1', 'human', 'pending'],
    ]);
    const log = await new CampaignLog(dir).read();
    assert.deepEqual(log.records.map((r) => r.type), ['campaign.assigned', 'link.issued', 'link.issued']);
    // the same spec again: nothing changes
    const again = await create();
    assert.equal(again.created.created, false);
    assert.equal((await readRunSet(new RunSetLayout(dir).state))!.records.length, 1 + 4);
    // a third person: refused, naming the change, nothing written
    const before = await fsp.readFile(new RunSetLayout(dir).state, 'utf8');
    await assert.rejects(create('{"baseliners": [{"id": "ana"}, {"id": "bo"}, {"id": "cy"}], "assignment": "balanced"}'),
      (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /changes this campaign's assignment/.test((e as Error).message) && /\+ cy fixture2026\/90001\/0/.test((e as Error).message));
    assert.equal(await fsp.readFile(new RunSetLayout(dir).state, 'utf8'), before);
  });

  it('links: one per person from the key in the environment; a token opens only its own person; re-issue and revoke refuse the old one', async () => {
    await create();
    assert.throws(() => campaignKey({}), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /EXPBENCH_CAMPAIGN_KEY/.test((e as Error).message));
    const key = campaignKey({ EXPBENCH_CAMPAIGN_KEY: KEY });
    const v = await view();
    const links = await campaignLinks(dir, v, key, 'http://127.0.0.1:9000');
    assert.deepEqual(links.map((l) => l.person), ['ana', 'bo']);
    const tok = (p: string) => new URL(links.find((l) => l.person === p)!.url!).searchParams.get('tkn')!;
    assert.match(links[0].url!, /^http:\/\/127\.0\.0\.1:9000\/\?tkn=[\w-]{43}$/);
    const states = async () => linkStates((await new CampaignLog(dir).read()).records);
    assert.equal(personOfToken(key, v.id, await states(), tok('ana')), 'ana');
    assert.equal(personOfToken(key, v.id, await states(), tok('bo')), 'bo');
    assert.equal(personOfToken('x'.repeat(40), v.id, await states(), tok('ana')), undefined, 'another key gives other tokens');
    // one character changed (the last of 43 base64url characters is one of 16: it may already be 'A')
    const changed = (t: string) => t.slice(0, 42) + (t.endsWith('A') ? 'E' : 'A');
    assert.notEqual(changed(tok('ana')), tok('ana'));
    assert.equal(personOfToken(key, v.id, await states(), changed(tok('ana'))), undefined);
    assert.ok(!(await fsp.readFile(path.join(dir, 'campaign.jsonl'), 'utf8')).includes(tok('ana')), 'no token is stored');
    await reissueLink(dir, v, 'ana');
    assert.equal(personOfToken(key, v.id, await states(), tok('ana')), undefined, 'the old link is refused after re-issue');
    const fresh = (await campaignLinks(dir, v, key)).find((l) => l.person === 'ana')!;
    assert.equal(personOfToken(key, v.id, await states(), new URL(fresh.url!).searchParams.get('tkn')!), 'ana');
    await revokeLink(dir, v, 'bo');
    assert.equal(personOfToken(key, v.id, await states(), tok('bo')), undefined);
    assert.deepEqual((await campaignLinks(dir, v, key)).find((l) => l.person === 'bo'), { person: 'bo', generation: 1, revoked: true });
    await assert.rejects(reissueLink(dir, v, 'cy'), (e: unknown) => /cy: not a baseliner/.test((e as Error).message));
  });

  it('board, person view and time sheet read the real sessions; working time is the host clock\'s', async () => {
    await create();
    const v = await view();
    const layout = new RunSetLayout(dir);
    const cache = path.join(tmp, 'cache');
    const loaded = (await planCampaign(parseCampaignSpec(SPEC(TWO), path.join(tmp, 'campaign.jsonc')))).loaded;
    let t = Date.parse('2026-12-01T10:00:00Z');
    const now = () => t;
    const service = new SessionService();
    // ana works on both of hers (one pause on the first) and submits the first; bo opens nothing.
    const [a0, a1] = v.units.filter((u) => u.name.includes('.ana.'));
    for (const u of [a0, a1]) {
      await prepareTask({ task: loaded.tasks.find((x) => x.id === u.task)!, outDir: layout.session(u.dir), cacheDir: cache });
    }
    const h = await service.open(layout.session(a0.dir), { client: CHANNEL_CLIENT, taskId: a0.task, now, delayMs: 10, draftQuietMs: 5 });
    await h.record({ type: 'baseliner.attested', baseliner: 'Ana Ruiz', rules: [...ATTESTATION_RULES], aiAllowed: false, client: CHANNEL_CLIENT });
    await h.startClock();
    t += 20 * 60_000;
    await h.pauseClock('lunch');
    t += 45 * 60_000; // paused: not working time
    await h.resumeClock();
    t += 10 * 60_000;
    await h.submit({ design: 'the design', conclusion: 'the conclusion' });
    await h.release();
    const h1 = await service.open(layout.session(a1.dir), { client: CHANNEL_CLIENT, taskId: a1.task, now, delayMs: 10, draftQuietMs: 5 });
    await h1.startClock();
    t += 5 * 60_000;
    await h1.pauseClock('break');
    await h1.release();

    const board = await campaignBoard(dir, v, t);
    assert.deepEqual(board.map((r) => [r.person, r.task, r.status, r.opened, r.workingMs, r.pauses, r.submitted, r.attestedAs ?? '']), [
      ['ana', 'fixture2026/90001/0', 'submitted', true, 30 * 60_000, 1, true, 'Ana Ruiz'],
      ['ana', 'fixture2026/90001/1', 'paused', true, 5 * 60_000, 1, false, ''],
      ['bo', 'fixture2026/90001/0', 'not started', false, 0, 0, false, ''],
      ['bo', 'fixture2026/90001/1', 'not started', false, 0, 0, false, ''],
    ]);
    assert.equal(board[0].name, 'Ana Ruiz');
    assert.equal(board[0].outcome?.submitted, true, 'a submitted row carries its outcome');
    assert.equal(board[1].outcome, undefined);

    const mine = await personTasks(dir, v, 'bo', t);
    assert.deepEqual(mine.map((r) => [r.session, r.status]), [['fixture2026-90001-0.bo.a1', 'not started'], ['fixture2026-90001-1.bo.a1', 'not started']]);
    const anas = await personTasks(dir, v, 'ana', t);
    assert.deepEqual(anas.map((r) => [r.task, r.status, r.workingMs]), [['fixture2026/90001/0', 'submitted', 30 * 60_000], ['fixture2026/90001/1', 'paused', 5 * 60_000]]);
    assert.deepEqual(Object.keys(anas[0]).sort(), ['phase', 'session', 'status', 'task', 'workingMs'], 'nothing else of the session: no outcome, no scores');

    const sheet = await campaignTimesheet(dir, v, t);
    assert.equal(sheet.length, 4, 'one row per assignment, opened or not');
    assert.deepEqual(sheet[0], {
      person: 'ana', task: 'fixture2026/90001/0', session: 'fixture2026-90001-0.ana.a1', start: '2026-12-01T10:00:00.000Z', end: '2026-12-01T11:15:00.000Z',
      workingMs: 30 * 60_000, pauses: 1, submitted: true, gaveUp: false,
    });
    const csv = timesheetCsv(sheet).split('\r\n');
    assert.equal(csv[0], 'person,task,session,start,end,working_seconds,working_hms,pauses,submitted,gave_up');
    assert.equal(csv[1], 'ana,fixture2026/90001/0,fixture2026-90001-0.ana.a1,2026-12-01T10:00:00.000Z,2026-12-01T11:15:00.000Z,1800.000,0:30:00,1,true,false');
    assert.equal(csv[3], 'bo,fixture2026/90001/0,fixture2026-90001-0.bo.a1,,,0.000,0:00:00,0,false,false');
    assert.equal(csv.length, 6, 'header, four rows, the final CRLF');
  });

  it('the front door: each person\'s link opens only their own landing page and sessions; the other\'s session, a wrong or re-issued token are refused', async () => {
    await create();
    const v = await view();
    const links = await campaignLinks(dir, v, KEY);
    const front = await startCampaignFront({ dir, key: KEY, gate: async () => ({ state: 'preparing', position: 2 }) });
    try {
      const tokenOf = (p: string) => new URL(links.find((l) => l.person === p)!.url!).searchParams.get('tkn')!;
      const get = (p: string, cookie?: string) => fetch(front.origin + p, { redirect: 'manual', headers: cookie ? { cookie } : {} });
      const enter = async (p: string) => {
        const r = await get(`/?tkn=${tokenOf(p)}`);
        assert.equal(r.status, 303);
        assert.equal(r.headers.get('location'), '/', 'the token leaves the address bar');
        const c = r.headers.get('set-cookie')!;
        assert.match(c, /HttpOnly; SameSite=Strict/);
        return c.split(';')[0];
      };
      const ana = await enter('ana');
      const bo = await enter('bo');
      const anaPage = await (await get('/', ana)).text();
      assert.match(anaPage, /Your tasks, ana/);
      assert.match(anaPage, /fixture2026-90001-0\.ana\.a1/);
      assert.doesNotMatch(anaPage, /\.bo\./, 'nothing of bo\'s sessions');
      assert.match(await (await get('/', bo)).text(), /fixture2026-90001-1\.bo\.a1/);
      assert.equal((await get('/s/fixture2026-90001-0.bo.a1/', ana)).status, 403, 'ana\'s cookie does not open bo\'s session');
      const own = await get('/s/fixture2026-90001-0.ana.a1/', ana);
      assert.equal(own.status, 503);
      assert.match(await own.text(), /Your task is being prepared[\s\S]*number 2 in the queue/);
      assert.equal((await get('/')).status, 401);
      assert.equal((await get('/?tkn=' + 'A'.repeat(43))).status, 403);
      await reissueLink(dir, v, 'bo');
      assert.equal((await get('/', bo)).status, 403, 'a re-issued link refuses the old cookie at once');
      assert.equal((await get('/', ana)).status, 200);
    } finally {
      await front.close();
    }
  });

  it('the time sheet quotes RFC 4180 fields and defuses spreadsheet formulas', () => {
    const row = { person: '=cmd', task: 'a,b', session: 'q"x', start: '', end: '', workingMs: 1500, pauses: 0, submitted: false, gaveUp: true };
    assert.equal(timesheetCsv([row]).split('\r\n')[1], `'=cmd,"a,b","q""x",,,1.500,0:00:01,0,false,true`);
  });
});

describe('baseline campaigns: the CLI (campaign create, runs links, runs timesheet, runs status)', function () {
  this.timeout(180_000);
  let tmp: string;
  beforeEach(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-campaigns-cli-'));
    await buildRunSetFixture(tmp, 2);
  });
  afterEach(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  it('creates a campaign of two people × two tasks, lists each person\'s link, re-issues one, and prints a four-row time sheet', async () => {
    const file = path.join(tmp, 'campaign.jsonc');
    const dir = path.join(tmp, 'c');
    await fsp.writeFile(file, SPEC(TWO));
    const made = await cli(['campaign', 'create', file, '--out', dir, '--json']);
    assert.equal(made.code, 0, made.stderr);
    assert.deepEqual(JSON.parse(made.stdout).assignment, [
      { person: 'ana', task: 'fixture2026/90001/0' }, { person: 'ana', task: 'fixture2026/90001/1' },
      { person: 'bo', task: 'fixture2026/90001/0' }, { person: 'bo', task: 'fixture2026/90001/1' },
    ]);
    const noKey = await cli(['runs', 'links', dir]);
    assert.equal(noKey.code, 1);
    assert.match(noKey.stderr, /EXPBENCH_CAMPAIGN_KEY/);
    const env = { ...OFFLINE_ENV, EXPBENCH_CAMPAIGN_KEY: KEY };
    const links = await cli(['runs', 'links', dir, '--json'], { env });
    assert.equal(links.code, 0, links.stderr);
    const l1 = JSON.parse(links.stdout) as Array<{ person: string; url: string }>;
    assert.deepEqual(l1.map((l) => l.person), ['ana', 'bo']);
    assert.ok(l1.every((l) => /^http:\/\/127\.0\.0\.1:8470\/\?tkn=[\w-]{43}$/.test(l.url)));
    const re = await cli(['runs', 'links', dir, '--json', '--reissue', 'bo'], { env });
    const l2 = JSON.parse(re.stdout) as Array<{ person: string; url: string }>;
    assert.equal(l2[0].url, l1[0].url, 'ana keeps her link');
    assert.notEqual(l2[1].url, l1[1].url, 'bo gets a new one');
    const sheet = await cli(['runs', 'timesheet', dir, '--csv']);
    assert.equal(sheet.code, 0, sheet.stderr);
    assert.equal(sheet.stdout.split('\r\n').filter(Boolean).length, 5, 'a header and four rows');
    const status = await cli(['runs', 'status', dir, '--json']);
    assert.equal(status.code, 0, status.stderr);
    const s = JSON.parse(status.stdout) as { kind: string; rows: Array<{ person: string; status: string }> };
    assert.equal(s.kind, 'campaign');
    assert.deepEqual(s.rows.map((r) => `${r.person} ${r.status}`), ['ana not started', 'ana not started', 'bo not started', 'bo not started']);
    await fsp.writeFile(file, SPEC('{"baseliners": [{"id": "ana"}], "assignment": "balanced"}'));
    const changed = await cli(['campaign', 'create', file, '--out', dir]);
    assert.equal(changed.code, 1);
    assert.match(changed.stderr, /changes this campaign's assignment[\s\S]*- bo fixture2026\/90001\/0/);
  });
});
