import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { LIMITS } from '../../src/core/untrusted';
import { ChannelClient } from '../../src/core/channel/client';
import { ATTESTATION_RULES } from '../../src/core/channel/protocol';
import { BUDGET_BEAT_MS, startBaselineChannel, type BaselineChannel } from '../../src/core/flows/baselineChannel';
import { judgeStep } from '../../src/core/flows/judge';
import { prepareTask } from '../../src/core/flows/prepareTask';
import { verifyStep } from '../../src/core/flows/verify';
import { SessionLayout } from '../../src/core/layout';
import { bundledDatasetDir } from '../../src/core/paths';
import { DEFAULT_IMAGE, removeWorkContainer } from '../../src/core/sandbox';
import { ensureWorkContainer } from '../../src/core/sandbox/work';
import { readEvents } from '../../src/core/session/events';
import { writeSessionMarker } from '../../src/core/session/marker';
import { readState } from '../../src/core/session/store';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import type { Task } from '../../src/core/tasks/types';
import { requireDocker } from '../harness/docker';
import { makeSessionFolder } from './session-fixtures';

const ROOT = path.resolve(__dirname, '../../..');
const design = (freeText: string) => ({ constants: [], independent: [], dependent: [], freeText });

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One raw JSON-Lines exchange over the socket (for malformed requests the client would never send). */
function rawExchange(socketPath: string, lines: string[], expect: number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socketPath);
    let buf = '';
    const got: unknown[] = [];
    s.on('connect', () => s.write(lines.join('\n') + '\n'));
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      buf += d;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) { got.push(JSON.parse(buf.slice(0, nl))); buf = buf.slice(nl + 1); }
      if (got.length >= expect) { s.destroy(); resolve(got); }
    });
    s.on('error', reject);
  });
}

/**
 * The host channel of a proctored window (issue 13) on a real unix socket and real session folders:
 * the host is the only writer and stamps events; the solver's client queues while the host is away.
 */
describe('baseline channel (flows/baselineChannel, channel/client)', function () {
  this.timeout(60_000);
  let task: Task;
  const cleanup: string[] = [];
  const channels: BaselineChannel[] = [];
  const clients: ChannelClient[] = [];
  before(async () => { task = findTask(await loadDatasets([bundledDatasetDir()]), 'sample/toycal/0')!; });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.dispose();
    for (const c of channels.splice(0)) await c.dispose();
  });
  after(async () => { for (const d of cleanup) await fsp.rm(d, { recursive: true, force: true }).catch(() => undefined); });

  async function session(): Promise<{ layout: SessionLayout; sock: string; queue: string }> {
    const layout = await makeSessionFolder();
    cleanup.push(layout.root);
    await writeSessionMarker(layout.root, task);
    return { layout, sock: path.join(layout.root, 'channel', 'session.sock'), queue: path.join(layout.root, 'channel', 'solver-queue.jsonl') };
  }
  const serve = async (sessionDir: string, socketPath: string, extra: Partial<Parameters<typeof startBaselineChannel>[0]> = {}) => {
    const c = await startBaselineChannel({ sessionDir, socketPath, ...extra });
    channels.push(c);
    return c;
  };
  const client = (socketPath: string, queueFile: string) => {
    const c = new ChannelClient({ socketPath, queueFile, retryMs: 50 });
    clients.push(c);
    return c;
  };

  it('hello gives the brief without ground truth; the clock waits for the attestation; events carry the host\'s time', async () => {
    const { layout, sock, queue } = await session();
    await serve(layout.root, sock);
    assert.equal((await fsp.stat(sock)).mode & 0o777, 0o666, 'connectable by the container\'s user');
    const c = client(sock, queue);
    await c.start();
    await until('connected', () => c.status.connected);
    const hello = await c.call('hello', { client: 'test' });
    assert.ok(!hello.queued);
    if (hello.queued) return;
    assert.equal(hello.result.brief.question, task.question);
    assert.deepEqual(Object.keys(hello.result.brief).sort(), ['agentInstructions', 'method', 'question', 'taskId', 'type']);
    const text = JSON.stringify(hello.result);
    assert.ok(!text.includes(task.expectedOutcome.slice(0, 60)), 'no expected_outcome in hello');
    assert.equal(hello.result.aiAllowed, false);
    assert.deepEqual(hello.result.rules, [...ATTESTATION_RULES]);

    await assert.rejects(c.call('clock', { op: 'start' }), /has not attested yet/);
    await assert.rejects(c.call('attest', { baseliner: 'b-017', rules: ATTESTATION_RULES.slice(0, 2) }), /every rule must be accepted/);
    await assert.rejects(c.call('attest', { baseliner: '  ', rules: [...ATTESTATION_RULES] }), /a name or id is needed/);
    const before = Date.now();
    const att = await c.call('attest', { baseliner: 'b-017', rules: [...ATTESTATION_RULES] });
    assert.ok(!att.queued && att.result.attested?.baseliner === 'b-017');
    await c.call('aiSettings', { off: true, settings: { 'chat.disableAIFeatures': true } });
    await c.call('clock', { op: 'start' });
    // A client cannot date its own events: an `at` it sends is not part of the schema and is dropped.
    await c.call('addNote', { text: 'found the loader', at: '1999-01-01T00:00:00.000Z' } as never);
    await c.call('setDesign', { design: design('vary T') });
    const st = await c.call('setConclusion', { text: 'ECE goes down' });
    assert.ok(!st.queued && st.result.clock.status === 'running' && st.result.conclusion === 'ECE goes down');
    const after = Date.now();
    await until('events on disk', async () => (await readEvents(layout.events)).events.some((e) => e.type === 'note.added'));
    const events = (await readEvents(layout.events)).events;
    const mine = events.filter((e) => ['baseliner.attested', 'ai.settings', 'clock.started', 'note.added'].includes(e.type));
    // ai.settings twice: the host's own reading at the attestation, and again when the window reports
    assert.deepEqual(mine.map((e) => e.type), ['baseliner.attested', 'ai.settings', 'ai.settings', 'clock.started', 'note.added']);
    for (const e of mine) {
      const t = Date.parse(e.at);
      assert.ok(t >= before - 5 && t <= after + 5, `${e.type} stamped by the host (${e.at})`);
    }
    const att0 = mine[0];
    assert.ok(att0.type === 'baseliner.attested' && att0.baseliner === 'b-017' && att0.aiAllowed === false && att0.rules.length === ATTESTATION_RULES.length);
    const ai = mine[2];
    assert.ok(ai.type === 'ai.settings' && ai.off && !ai.allowed && ai.source === 'host' && ai.window?.off === true);
    assert.equal(events.find((e) => e.type === 'session.opened')?.type === 'session.opened' && (events.find((e) => e.type === 'session.opened') as { client: string }).client, 'solver');
  });

  it('bad input: non-JSON is ignored, a bad request or unknown method is answered by its id with a named error', async () => {
    const { layout, sock } = await session();
    await serve(layout.root, sock);
    const out = await rawExchange(sock, [
      'this is not json',
      JSON.stringify({ id: 'a', method: 'rm -rf', params: {} }),
      JSON.stringify({ id: 'b', method: 'addNote', params: { text: 42 } }),
      JSON.stringify({ id: 'c', method: 'setPhase', params: { phase: 'judging' } }),
    ], 3) as Array<{ id: string; error?: { code: string; message: string } }>;
    const byId = Object.fromEntries(out.map((r) => [r.id, r]));
    assert.match(byId.a.error!.message, /bad request: method/);
    assert.equal(byId.b.error!.code, 'BAD_INPUT');
    assert.match(byId.b.error!.message, /^addNote params: text/);
    assert.match(byId.c.error!.message, /^setPhase params: phase/);
    assert.equal((await readState(layout.state))?.notes.length ?? 0, 0, 'nothing was written');
  });

  it('the host is not running: edits queue in memory and in the channel folder, survive a reload, and flush in order on connect', async () => {
    const { layout, sock, queue } = await session();
    const first = client(sock, queue);
    await first.start();
    await until('a failed attempt', () => first.status.lastError !== undefined);
    assert.equal(first.status.connected, false);
    await assert.rejects(first.call('hello', {}), /the host side is not running/);
    assert.deepEqual(await first.call('attest', { baseliner: 'b-1', rules: [...ATTESTATION_RULES] }), { queued: true });
    await first.call('addNote', { text: 'note 1' });
    await first.call('setDesign', { design: design('draft a') });
    await first.call('setDesign', { design: design('draft b') }); // coalesced with the one before
    await first.call('addNote', { text: 'note 2' });
    await first.call('setPhase', { phase: 'implementation' });
    assert.equal(first.status.queued, 5);
    const file = (await fsp.readFile(queue, 'utf8')).trim().split('\n').map((l) => JSON.parse(l).method);
    assert.deepEqual(file, ['attest', 'addNote', 'setDesign', 'addNote', 'setPhase']);
    first.dispose(); // the window reloads

    const second = client(sock, queue);
    await second.start();
    assert.equal(second.status.queued, 5, 'the queue file is read back');
    await serve(layout.root, sock);
    await until('flushed', () => second.status.connected && second.status.queued === 0);
    // the file is written after the answers (a reload before that replays ids the host has done once)
    await until('the queue file emptied', async () => (await fsp.readFile(queue, 'utf8')).trim() === '');
    const hello = await second.call('hello', {});
    assert.ok(!hello.queued);
    if (hello.queued) return;
    assert.deepEqual(hello.result.state.notes.map((n) => n.text), ['note 1', 'note 2']);
    assert.equal(hello.result.state.design.freeText, 'draft b');
    assert.equal(hello.result.state.phase, 'implementation');
    assert.equal(hello.result.state.attested?.baseliner, 'b-1');
    const types = (await readEvents(layout.events)).events.map((e) => e.type).filter((t) => t !== 'session.opened' && t !== 'answers.saved');
    assert.deepEqual(types, ['baseliner.attested', 'ai.settings', 'note.added', 'note.added', 'phase.changed']);
  });

  it('the host goes away and comes back: the client reconnects, flushes once, and the attestation is read back from the log', async () => {
    const { layout, sock, queue } = await session();
    const host = await serve(layout.root, sock);
    const c = client(sock, queue);
    await c.start();
    await until('connected', () => c.status.connected);
    await c.call('attest', { baseliner: 'b-2', rules: [...ATTESTATION_RULES] });
    await c.call('clock', { op: 'start' });
    await host.dispose();
    channels.splice(channels.indexOf(host), 1);
    await until('disconnected', () => !c.status.connected);
    assert.deepEqual(await c.call('addNote', { text: 'while away' }), { queued: true });
    await c.call('clock', { op: 'pause', reason: 'host away' });
    assert.equal(c.status.queued, 2);
    await serve(layout.root, sock);
    await until('flushed', () => c.status.connected && c.status.queued === 0);
    const st = await c.call('state', {});
    assert.ok(!st.queued);
    if (st.queued) return;
    assert.equal(st.result.attested?.baseliner, 'b-2', 'restored from baseliner.attested in events.jsonl');
    assert.equal(st.result.clock.status, 'paused');
    assert.deepEqual(st.result.notes.map((n) => n.text), ['while away']);
  });

  it('the host watches the workspace while the channel runs: files written there are file events, caches are not, nothing after dispose', async () => {
    const { layout, sock } = await session();
    const host = await serve(layout.root, sock, { watchDebounceMs: 50 });
    await fsp.mkdir(path.join(layout.workspace, 'experiments', '__pycache__'), { recursive: true });
    await fsp.mkdir(path.join(layout.workspace, '__pycache__'), { recursive: true });
    await fsp.writeFile(path.join(layout.workspace, '__pycache__', 'x.pyc'), 'cache');
    await fsp.writeFile(path.join(layout.workspace, 'experiments', '__pycache__', 'run.cpython-311.pyc'), 'cache');
    await fsp.writeFile(path.join(layout.workspace, 'experiments', 'run.py'), 'print(1)\n');
    await fsp.appendFile(path.join(layout.workspace, 'train.py'), 'print("epoch 2")\n');
    const fileEvents = async () => (await readEvents(layout.events)).events.filter((e) => e.type.startsWith('file.')) as Array<{ type: string; path: string }>;
    // Not flushed by the test: the watcher records on its own after its quiet time.
    await until('file events on disk', async () => {
      const got = await fileEvents();
      return got.some((e) => e.type === 'file.created' && e.path === 'experiments/run.py') && got.some((e) => e.type === 'file.changed' && e.path === 'train.py');
    });
    await host.flushActivity();
    const got = await fileEvents();
    assert.deepEqual(got.filter((e) => /pycache|\.pyc$/.test(e.path)), [], 'caches are not recorded');
    assert.deepEqual(got.map((e) => `${e.type} ${e.path}`).sort(), ['file.changed train.py', 'file.created experiments/run.py']);
    await host.dispose();
    channels.splice(channels.indexOf(host), 1);
    await fsp.writeFile(path.join(layout.workspace, 'after.txt'), 'late');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await fileEvents()).length, 2, 'the watcher stopped with the channel');
  });

  it('before the attestation the host answers only hello and attest (issue 26, item 6)', async () => {
    const { layout, sock } = await session();
    await serve(layout.root, sock);
    const lines = ['state', 'addNote', 'setPhase', 'setConclusion', 'clock', 'aiSettings', 'runScript', 'submit', 'giveUp'].map((method, i) => JSON.stringify({
      id: `r${i}`, method,
      params: method === 'addNote' || method === 'setConclusion' ? { text: 'x' } : method === 'setPhase' ? { phase: 'implementation' } : method === 'clock' ? { op: 'start' } : method === 'aiSettings' ? { off: true, settings: {} } : {},
    }));
    const out = await rawExchange(sock, [...lines, JSON.stringify({ id: 'h', method: 'hello', params: {} })], lines.length + 1) as Array<{ id: string; result?: unknown; error?: { message: string } }>;
    for (const r of out.filter((x) => x.id !== 'h')) assert.match(r.error?.message ?? '', /has not attested yet/, `${r.id}: ${JSON.stringify(r)}`);
    assert.ok(out.find((r) => r.id === 'h')?.result, 'hello is answered');
    const types = (await readEvents(layout.events)).events.map((e) => e.type);
    assert.deepEqual(types.filter((t) => t !== 'session.opened'), [], 'nothing was recorded');
  });

  it('a forged aiSettings {off: true} is not believed: the host reads the settings files itself (issue 26, item 6)', async () => {
    const { layout, sock, queue } = await session();
    // AI turned on where the window reads it: a profile's settings and the workspace's settings
    await fsp.mkdir(path.join(layout.channel, 'editor', 'User', 'profiles', 'p1'), { recursive: true });
    await fsp.writeFile(path.join(layout.channel, 'editor', 'User', 'profiles', 'p1', 'settings.json'), '{ // on\n "chat.agent.enabled": true,\n}');
    await fsp.mkdir(path.join(layout.workspace, '.vscode'), { recursive: true });
    await fsp.writeFile(path.join(layout.workspace, '.vscode', 'settings.json'), JSON.stringify({ 'editor.inlineSuggest.enabled': true }));
    await serve(layout.root, sock);
    const c = client(sock, queue);
    await c.start();
    await until('connected', () => c.status.connected);
    await c.call('attest', { baseliner: 'b-5', rules: [...ATTESTATION_RULES] });
    await c.call('aiSettings', { off: true, settings: { 'chat.agent.enabled': false } });
    await until('ai events', async () => (await readEvents(layout.events)).events.filter((e) => e.type === 'ai.settings').length === 2);
    const ai = (await readEvents(layout.events)).events.filter((e) => e.type === 'ai.settings');
    for (const e of ai) {
      assert.ok(e.type === 'ai.settings' && e.source === 'host' && e.off === false, JSON.stringify(e));
      assert.deepEqual(e.on, ['channel/editor/User/profiles/p1/settings.json: chat.agent.enabled', 'workspace/.vscode/settings.json: editor.inlineSuggest.enabled']);
    }
    const last = ai[1];
    assert.ok(last.type === 'ai.settings' && last.window?.off === true, 'the window\'s claim is kept beside, as said');
    // a settings file that is a link (to a file the host could read) is not followed, and counts as on
    await fsp.rm(path.join(layout.workspace, '.vscode', 'settings.json'));
    await fsp.symlink('/etc/hostname', path.join(layout.workspace, '.vscode', 'settings.json'));
    await c.call('aiSettings', { off: true, settings: {} });
    await until('third ai event', async () => (await readEvents(layout.events)).events.filter((e) => e.type === 'ai.settings').length === 3);
    const third = (await readEvents(layout.events)).events.filter((e) => e.type === 'ai.settings')[2];
    assert.ok(third.type === 'ai.settings' && third.on?.some((o) => /workspace\/\.vscode\/settings\.json: unreadable \(.*symbolic link/.test(o)), JSON.stringify(third));
  });

  it('notes of 999,000 characters: refused with a clear message; answers stay within the line limit; the window keeps working (issue 33)', async () => {
    const { layout, sock, queue } = await session();
    await serve(layout.root, sock);
    const c = client(sock, queue);
    await c.start();
    await until('connected', () => c.status.connected);
    await c.call('attest', { baseliner: 'b-6', rules: [...ATTESTATION_RULES] });
    // the window's own check, before anything is sent or queued
    await assert.rejects(c.call('addNote', { text: 'n'.repeat(999_000) }), /a note is at most 100000 characters/);
    // the same request sent raw (as a client that skips the check would): the host refuses it by its id and keeps serving
    const raw = await rawExchange(sock, [JSON.stringify({ id: 'big', method: 'addNote', params: { text: 'n'.repeat(999_000) } }), JSON.stringify({ id: 's', method: 'state', params: {} })], 2) as Array<{ id: string; error?: { message: string }; result?: unknown }>;
    assert.match(raw.find((r) => r.id === 'big')!.error!.message, /addNote params: text: a note is at most 100000 characters/);
    assert.ok(raw.find((r) => r.id === 's')!.result, 'the next request is answered');
    // a line over the channel's limit: answered by its id, the connection goes on
    const over = await rawExchange(sock, [JSON.stringify({ id: 'huge', method: 'addNote', params: { text: 'n'.repeat(1_100_000) } }), JSON.stringify({ id: 's2', method: 'state', params: {} })], 2) as Array<{ id: string; error?: { message: string }; result?: unknown }>;
    assert.match(over.find((r) => r.id === 'huge')!.error!.message, /over the channel's limit of 1,000,000 characters/);
    assert.ok(over.find((r) => r.id === 's2')!.result);
    // notes at the limit, many of them: every answer stays under the line limit, the oldest are counted out
    for (let i = 0; i < 14; i++) await c.call('addNote', { text: `${i}`.padEnd(99_000, 'n') });
    const hello = await c.call('hello', {});
    assert.ok(!hello.queued);
    if (hello.queued) return;
    assert.ok(JSON.stringify(hello.result).length < 1_000_000, `hello is ${JSON.stringify(hello.result).length} characters`);
    assert.ok((hello.result.state.omittedNotes ?? 0) > 0, 'the oldest notes are left out');
    assert.equal(hello.result.state.notes.length + (hello.result.state.omittedNotes ?? 0), 14, 'and counted');
    assert.equal(hello.result.state.notes.at(-1)?.text.slice(0, 2), '13', 'the newest are shown');
    await until('every note kept on the host (state.json)', async () => (await readState(layout.state))?.notes.length === 14);
    await c.call('clock', { op: 'start' });
    const st = await c.call('setConclusion', { text: 'still works' });
    assert.ok(!st.queued && st.result.conclusion === 'still works');
    assert.ok(c.status.connected && !c.status.lastError, 'no reconnect loop');
  });

  it('a hard budget from the host (a campaign\'s hours): the clock stops at it, onClock(true) freezes the container, resume is refused (issue 32)', async () => {
    const { layout, sock, queue } = await session();
    const clockCalls: boolean[] = [];
    const ch = await serve(layout.root, sock, { onClock: async (paused) => { clockCalls.push(paused); } });
    const c = client(sock, queue);
    await c.start();
    await until('connected', () => c.status.connected);
    await c.call('attest', { baseliner: 'b-9', rules: [...ATTESTATION_RULES] });
    await c.call('clock', { op: 'start' });
    const t0 = Date.now();
    await ch.setBudget(1_500);
    await until('the clock stopped at the budget', () => ch.clockPaused(), BUDGET_BEAT_MS * 3);
    await until('onClock(true)', () => clockCalls.includes(true), 5_000);
    // the state file is written by the host's store after the change: wait for it there
    await until('the segment closed in state.json', async () => (await readState(layout.state))?.clock.segments.at(-1)?.end !== undefined, 10_000);
    const st = (await readState(layout.state))!;
    const seg = st.clock.segments[st.clock.segments.length - 1];
    assert.equal(seg.pauseReason, 'time budget used up', JSON.stringify(st.clock));
    const worked = st.clock.segments.reduce((a, g) => a + (Date.parse(g.end!) - Date.parse(g.start)), 0);
    assert.ok(worked <= 1_500, `working time ${worked} ms never passes the budget`);
    assert.ok(Date.now() - t0 >= 1_000, 'it ran until the budget first');
    await ch.resumeClock().catch(() => undefined);
    assert.equal(ch.clockPaused(), true, 'the host\'s resume does not pass the budget');
    await assert.rejects(c.call('clock', { op: 'resume' }));
    assert.equal(clockCalls[clockCalls.length - 1], true, 'the container stays frozen');
  });

  it('after Submit every state-changing request is refused with a clear answer; nothing is recorded after `submitted`', async () => {
    const { layout, sock, queue } = await session();
    await serve(layout.root, sock, { steps: {} }); // Submit freezes; no verifier or judge here
    const c = client(sock, queue);
    await c.start();
    await until('connected', () => c.status.connected);
    await c.call('attest', { baseliner: 'b-8', rules: [...ATTESTATION_RULES] });
    await c.call('clock', { op: 'start' });
    await c.call('setPhase', { phase: 'implementation' });
    await c.call('setConclusion', { text: 'The accuracy is 0.5.' });
    const r = await c.call('submit', {});
    assert.ok(!r.queued && r.result.submitted === true);
    const before = (await readEvents(layout.events)).events;
    const stateBefore = await readState(layout.state);
    const attempts: Array<[string, Record<string, unknown>]> = [
      ['setPhase', { phase: 'conclusion' }], ['aiSettings', { off: true, settings: {} }], ['addNote', { text: 'late' }],
      ['setDesign', { design: design('late') }], ['setConclusion', { text: 'The accuracy is 0.99.' }],
      ['clock', { op: 'pause' }], ['giveUp', {}], ['submit', {}], ['runScript', {}],
    ];
    for (const [method, params] of attempts) {
      await assert.rejects(c.call(method as never, params as never), new RegExp(`${method} refused: the session was submitted at \\d{4}-.*nothing of it changes after that`), method);
    }
    // a window reopened on the submitted session may still attest to read it; nothing is recorded
    await c.call('attest', { baseliner: 'b-8', rules: [...ATTESTATION_RULES] });
    const after = (await readEvents(layout.events)).events;
    assert.deepEqual(after.slice(before.length).map((e) => e.type), [], 'no event after the refused requests');
    const submittedAt = after.findIndex((e) => e.type === 'submitted');
    assert.ok(submittedAt >= 0);
    assert.deepEqual(after.slice(submittedAt + 1).filter((e) => ['phase.changed', 'ai.settings', 'note.added', 'answers.saved'].includes(e.type)), []);
    assert.equal((await readState(layout.state))?.phase, stateBefore?.phase);
    assert.equal((await readState(layout.state))?.conclusion, 'The accuracy is 0.5.');
  });

  it('the notes together are capped (LIMITS.notesTotalChars): the note past it is refused, naming the limit; the ones before are kept', async () => {
    const { layout, sock, queue } = await session();
    await serve(layout.root, sock);
    const c = client(sock, queue);
    await c.start();
    await until('connected', () => c.status.connected);
    await c.call('attest', { baseliner: 'b-9', rules: [...ATTESTATION_RULES] });
    const fits = Math.floor(LIMITS.notesTotalChars / 99_050);
    for (let i = 0; i < fits; i++) await c.call('addNote', { text: `${i}`.padEnd(99_000, 'n') });
    await assert.rejects(c.call('addNote', { text: 'x'.padEnd(99_000, 'n') }),
      /note: the notes together would be [\d,]+ characters \(as JSON\), over the limit of 4,000,000 for all the notes of a session; this note was not added/);
    await until('notes on the host', async () => (await readState(layout.state))?.notes.length === fits);
    assert.ok((await fsp.stat(layout.state)).size < LIMITS.notesTotalChars + 200_000, 'state.json stays near the cap');
    const st = await c.call('addNote', { text: 'a short one still fits' });
    assert.ok(!st.queued);
  });

  it('a repeated request id is done once (a queue flushed after a lost answer)', async () => {
    const { layout, sock } = await session();
    await serve(layout.root, sock);
    const attest = JSON.stringify({ id: 'att-1', method: 'attest', params: { baseliner: 'b-9', rules: [...ATTESTATION_RULES] } });
    const req = JSON.stringify({ id: 'same-1', method: 'addNote', params: { text: 'once' } });
    const out = await rawExchange(sock, [attest, req, req], 3) as Array<{ id: string; result?: { notes: unknown[] } }>;
    assert.deepEqual(out.filter((r) => r.id === 'same-1').map((r) => r.result?.notes.length), [1, 1]);
    await until('state on disk', async () => ((await readState(layout.state))?.notes.length ?? 0) > 0);
    assert.deepEqual((await readEvents(layout.events)).events.filter((e) => e.type === 'note.added').length, 1);
  });

  describe('submit (Docker for the verifier; heuristic judge)', () => {
    let docker: import('dockerode');
    before(async function () { docker = await requireDocker(this); });

    it('runScript: the host runs reproduce_exp_bench.sh in the work container, records it, answers exit code and log tail; edits go on meanwhile; refused after the end', async () => {
      const { layout, sock, queue } = await session();
      const sessionId = `chan-run-${process.pid}-${Date.now()}`;
      await fsp.writeFile(layout.script, '#!/bin/bash\necho "from the container: $(pwd)"\nsleep 1\necho done > out.txt\necho oops >&2\nexit 3\n');
      const { container } = await ensureWorkContainer(docker, { task: task.id, session: sessionId, workspaceDir: layout.workspace, image: DEFAULT_IMAGE, limits: { network: false } });
      try {
        await serve(layout.root, sock, { workContainer: async () => container, watchDebounceMs: 50 });
        const c = client(sock, queue);
        await c.start();
        await until('connected', () => c.status.connected);
        await assert.rejects(c.call('runScript', {}), /has not attested yet/);
        await c.call('attest', { baseliner: 'b-4', rules: [...ATTESTATION_RULES] });
        await assert.rejects(c.call('runScript', {}), /the clock is not-started: start or resume it first/);
        await c.call('clock', { op: 'start' });
        const running = c.call('runScript', {});
        let runEnded = false;
        void running.then(() => { runEnded = true; }, () => { runEnded = true; });
        await new Promise((r) => setTimeout(r, 200));
        await c.call('addNote', { text: 'while it runs' });
        assert.equal(runEnded, false, 'a note is answered while the script runs');
        await assert.rejects(c.call('runScript', {}), /a run of reproduce_exp_bench.sh is going on/);
        const r = await running;
        assert.ok(!r.queued);
        if (r.queued) return;
        assert.equal(r.result.run.exitCode, 3);
        assert.ok(r.result.run.durationMs >= 1000, `duration ${r.result.run.durationMs}`);
        assert.match(r.result.logTail, /from the container: \/workspace[\s\S]*oops/);
        assert.deepEqual(r.result.state.runs.map((x) => x.id), [r.result.run.id]);
        assert.equal(await fsp.readFile(path.join(layout.workspace, 'out.txt'), 'utf8'), 'done\n', 'ran in the container on the session\'s workspace');
        const events = (await readEvents(layout.events)).events;
        const sr = events.find((e) => e.type === 'script.run');
        assert.ok(sr && sr.type === 'script.run' && sr.exitCode === 3 && sr.runId === r.result.run.id);
        assert.match(await fsp.readFile(path.join(layout.root, sr.log), 'utf8'), /from the container[\s\S]*oops/);
        await until('the run in state.json', async () => ((await readState(layout.state))?.runs.length ?? 0) === 1);
        await c.call('giveUp', {});
        await assert.rejects(c.call('runScript', {}), /runScript refused: the session was given up at /);
        assert.equal((await readEvents(layout.events)).events.filter((e) => e.type === 'script.run').length, 1);
      } finally {
        await removeWorkContainer(docker, sessionId).catch(() => undefined);
      }
    });

    it('submit freezes the answers on the host, runs verifier and judge there, and tells the solver only "submitted"', async () => {
      const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-channel-submit-'));
      cleanup.push(tmp);
      const root = path.join(tmp, 's');
      await prepareTask({ task, outDir: root, cacheDir: path.join(tmp, 'cache') });
      await writeSessionMarker(root, task);
      const l = new SessionLayout(root);
      const solution = path.join(ROOT, 'samples', 'solutions', 'toy-calibration');
      await fsp.mkdir(path.join(l.workspace, 'experiments'), { recursive: true });
      await fsp.copyFile(path.join(solution, 'temperature_scaling.py'), path.join(l.workspace, 'experiments', 'temperature_scaling.py'));
      await fsp.copyFile(path.join(solution, 'reproduce_exp_bench.sh'), l.script);
      const answers = JSON.parse(await fsp.readFile(path.join(solution, 'answers.json'), 'utf8')) as { design: string[] | string; conclusion: string };
      const sock = path.join(root, 'channel', 'session.sock');
      let hostSaw: unknown;
      const host = await serve(root, sock, { steps: { verify: verifyStep(), judge: judgeStep({ task, heuristic: true }) }, onSubmitted: (r) => { hostSaw = r; } });
      const c = client(sock, path.join(root, 'channel', 'solver-queue.jsonl'));
      try {
        await c.start();
        await until('connected', () => c.status.connected);
        await c.call('attest', { baseliner: 'b-3', rules: [...ATTESTATION_RULES] });
        await c.call('clock', { op: 'start' });
        await c.call('setDesign', { design: design(Array.isArray(answers.design) ? answers.design.join('\n') : answers.design) });
        await c.call('setConclusion', { text: answers.conclusion });
        const r = await c.call('submit', {});
        assert.ok(!r.queued);
        if (r.queued) return;
        assert.deepEqual(Object.keys(r.result).sort(), ['at', 'state', 'submitted']);
        assert.equal(r.result.submitted, true);
        assert.equal(r.result.state.finished, 'submitted');
        assert.doesNotMatch(JSON.stringify(r.result), /verif|judge|score|E_clean|verdict|gap|met\b/i, 'no scores for the baseliner');
        await assert.rejects(c.call('submit', {}), /submit refused: the session was submitted at /);

        const full = await host.lastSubmit();
        assert.equal(full?.verify?.ok, true, JSON.stringify(full?.verify));
        assert.match(full!.judge!.summary!, /^heuristic: /);
        assert.equal(hostSaw, full);
        const types = (await readEvents(l.events)).events.map((e) => e.type);
        assert.deepEqual(types.slice(-3), ['submitted', 'verify.finished', 'judge.finished']);
        await fsp.access(path.join(l.private, 'verify', 'latest.json'));
        await fsp.access(path.join(l.private, 'judge', 'latest.json'));
        assert.equal(JSON.parse(await fsp.readFile(l.answers, 'utf8')).conclusion, answers.conclusion);
      } finally {
        const manifest = JSON.parse(await fsp.readFile(l.manifest, 'utf8'));
        if (manifest.sessionId) await removeWorkContainer(docker, manifest.sessionId).catch(() => undefined);
      }
    });
  });
});
