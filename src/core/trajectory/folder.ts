import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { errorMessage } from '../util/errors';
import type { ImportContext } from './context';
import { obj, str } from './json';
import { eventListToTrajectory, isV0Event, isV1Event, type Located } from './openhands';

/**
 * OpenHands event folders: a conversation persisted one event per file.
 *
 * - V1 (software-agent-sdk `conversation/persistence_const.py`): `<conversation>/events/
 *   event-<idx, 5+ digits>-<event id>.json`, with `base_state.json` beside `events/` (the agent's
 *   model, the execution status);
 * - V0 (openhands `storage/locations.py`): `sessions/<sid>/events/<id>.json`.
 *
 * `dir` is the conversation folder or its `events/` folder. Files are read in index order; a file
 * that is no regular file, is larger than {@link EVENT_FILE_LIMIT} or is no JSON is a problem and
 * skipped. Returns false (nothing read) when the folder holds no event files.
 */
export const EVENT_FILE_LIMIT = 64 * 1024 * 1024;
const V1_NAME = /^event-(\d{5,})-([0-9a-fA-F-]{8,})\.json$/;
const V0_NAME = /^(\d+)\.json$/;

export async function isEventFolder(dir: string): Promise<boolean> {
  return (await eventFiles(dir)).files.length > 0;
}

async function eventFiles(dir: string): Promise<{ dir: string; files: Array<{ name: string; index: number }>; others: string[] }> {
  let eventsDir = dir;
  let names: string[];
  try {
    const sub = path.join(dir, 'events');
    const st = await fsp.stat(sub).catch(() => undefined);
    if (st?.isDirectory()) eventsDir = sub;
    names = await fsp.readdir(eventsDir);
  } catch { return { dir, files: [], others: [] }; }
  const v1 = names.filter((n) => V1_NAME.test(n));
  const pick = v1.length ? v1.map((name) => ({ name, index: Number(V1_NAME.exec(name)![1]) })) : names.filter((n) => V0_NAME.test(n)).map((name) => ({ name, index: Number(V0_NAME.exec(name)![1]) }));
  return { dir: eventsDir, files: pick.sort((a, b) => a.index - b.index), others: names.filter((n) => !pick.some((p) => p.name === n)) };
}

/** Imports an event folder as one trajectory (see above); false when it holds no event files. */
export async function importEventFolder(ctx: ImportContext): Promise<boolean> {
  const { dir, files } = await eventFiles(ctx.file);
  if (files.length === 0) return false;
  const events: Located[] = [];
  let v1 = 0; let v0 = 0;
  for (const f of files) {
    const file = path.join(dir, f.name);
    try {
      const st = await fsp.lstat(file);
      if (!st.isFile()) { ctx.problem({ file, pointer: '', severity: 'warning', message: 'not a regular file: skipped' }); continue; }
      if (st.size > EVENT_FILE_LIMIT) { ctx.problem({ file, pointer: '', severity: 'warning', message: `${st.size.toLocaleString('en')} bytes, more than an event file may hold (${EVENT_FILE_LIMIT.toLocaleString('en')}): skipped` }); continue; }
      const value: unknown = JSON.parse(await fsp.readFile(file, 'utf8'));
      if (isV1Event(value)) v1++; else if (isV0Event(value)) v0++;
      events.push({ value, pointer: '', file });
    } catch (e) {
      ctx.problem({ file, pointer: '', severity: 'error', message: `event file unreadable: ${errorMessage(e)}` });
    }
  }
  const format = v1 >= v0 ? 'openhands-v1' : 'openhands-v0';
  const conversation = path.basename(dir) === 'events' ? path.dirname(dir) : dir;
  const t = eventListToTrajectory(events, ctx.file, format, path.basename(conversation));
  // the conversation's own state: the agent's model (V1 `base_state.json`)
  try {
    const base = obj(JSON.parse(await fsp.readFile(path.join(conversation, 'base_state.json'), 'utf8')));
    const model = str(obj(obj(base?.agent)?.llm)?.model);
    if (model && !t.model) t.model = model;
    if (str(base?.execution_status)) t.sample = { id: t.id, status: str(base?.execution_status) };
  } catch { /* no base_state.json: an events folder alone */ }
  if (v1 === 0 && v0 === 0) t.problems.push({ file: ctx.file, pointer: '', severity: 'warning', message: `${files.length} event file(s), none an OpenHands event (V1 \`kind\`, V0 \`action\`/\`observation\`)` });
  await ctx.emit(t);
  return true;
}
