import { isHarnessJudge } from '../interop/harnessIn';
import { arr, isObj, obj, str, type Obj } from './json';
import { isV0Event, isV1Event } from './openhands';
import { isHarnessPatchName } from './expbench';
import type { TrajectoryFormat } from './types';
import { errorMessage } from '../util/errors';
import { openRegular, readRegularFile } from '../untrusted';
import { ExpBenchError } from '../errors';

/**
 * Which format a file holds, from its content (never its name or a version field): the first
 * bytes (zip signature; `[`, `{`), whether its first lines are separate JSON values (JSON Lines),
 * and the shape of the first value. The one exception is a zero-byte file named as a harness
 * patch (`…_eval_gen.patch`), which content cannot tell from any other empty file.
 */
export type Detected =
  | { kind: 'zip'; format: 'inspect-eval' }
  | { kind: 'jsonl'; format: TrajectoryFormat; shape: 'events' | 'eval-output' }
  | { kind: 'json'; format: TrajectoryFormat; shape: string; doc?: unknown; large?: boolean }
  | { kind: 'patch'; format: 'exp-bench-harness' }
  | { kind: 'unknown'; reason: string };

const HEAD_BYTES = 256 * 1024;
/** Whole documents above this size are not parsed for detection (only Inspect logs are that large). */
const PARSE_LIMIT = 32 * 1024 * 1024;

export async function detectFormat(file: string): Promise<Detected> {
  // non-blocking and regular files only: a FIFO given as a trajectory is refused, never waited on
  const fh = await openRegular(file);
  if (!fh) throw new ExpBenchError('BAD_INPUT', file, 'cannot read: no such file (ENOENT)');
  let head: Buffer; let size: number;
  try {
    size = (await fh.stat()).size;
    head = Buffer.alloc(Math.min(HEAD_BYTES, size));
    await fh.read(head, 0, head.length, 0);
  } finally { await fh.close(); }
  if (size === 0) return isHarnessPatchName(file) ? { kind: 'patch', format: 'exp-bench-harness' } : { kind: 'unknown', reason: 'the file is empty' };
  if (head.length >= 4 && head.readUInt32LE(0) === 0x04034b50) return { kind: 'zip', format: 'inspect-eval' };
  const text = head.toString('utf8').replace(/^\uFEFF/, '');
  const first = text.trimStart()[0];
  if (/^(diff |--- |Index: |Only in )/m.test(text.slice(0, 2000)) && first !== '{' && first !== '[') return { kind: 'patch', format: 'exp-bench-harness' };
  if (first !== '{' && first !== '[') return { kind: 'unknown', reason: 'neither a zip archive, JSON, JSON Lines nor a patch' };
  // JSON Lines: the first line is a whole JSON value and another value follows on the next line
  const nl = text.indexOf('\n');
  if (first === '{' && nl > 0) {
    const line1 = text.slice(0, nl).trim();
    const rest = text.slice(nl + 1).trimStart();
    let v1: unknown;
    try { v1 = JSON.parse(line1); } catch { v1 = undefined; }
    if (v1 !== undefined && (rest === '' || rest[0] === '{')) {
      const j = classifyLine(obj(v1));
      if (j) return { kind: 'jsonl', ...j };
      if (rest !== '') return { kind: 'unknown', reason: `JSON Lines whose first line has no known shape (keys ${Object.keys(obj(v1) ?? {}).slice(0, 8).join(', ')})` };
    }
  } else if (first === '{' && nl < 0 && size > head.length) {
    // one very long first line: a JSON Lines eval output or one large document; decide by its start
    if (/^\s*\{\s*"instance_id"/.test(text)) return { kind: 'jsonl', format: /"kind"\s*:\s*"\w+(Event|Observation)"/.test(text) ? 'openhands-v1' : 'openhands-v0', shape: 'eval-output' };
  }
  const inspectHead = first === '{' && /"eval"\s*:\s*\{/.test(text) && /"(version|status)"\s*:/.test(text);
  if (size > PARSE_LIMIT) {
    if (inspectHead) return { kind: 'json', format: 'inspect-json', shape: 'inspect-log', large: true };
    return { kind: 'unknown', reason: `a ${Math.round(size / 1048576)} MB JSON document whose start is no known format` };
  }
  let doc: unknown;
  try { doc = JSON.parse(((await readRegularFile(file)) ?? Buffer.alloc(0)).toString('utf8').replace(/^\uFEFF/, '')); } catch (e) {
    // a broken Inspect log is streamed: the samples before the damage are still read
    if (inspectHead) return { kind: 'json', format: 'inspect-json', shape: 'inspect-log', large: true };
    return { kind: 'unknown', reason: `not JSON: ${errorMessage(e)}` };
  }
  const c = classifyDoc(doc);
  if (c) return { kind: 'json', ...c, doc };
  if (Array.isArray(doc) && doc.length > 0 && doc.every((x) => isObj(x) && 'instance_id' in x && 'model_patch' in x)) return { kind: 'unknown', reason: `SWE-bench predictions (${doc.length} × {instance_id, model_patch}): patches without a trajectory` };
  if (Array.isArray(doc) && doc.length === 0) return { kind: 'unknown', reason: 'an empty JSON array: no events to read (an OpenHands export of a conversation with no events is one)' };
  return { kind: 'unknown', reason: `JSON of no known trajectory shape${isObj(doc) ? ` (keys ${Object.keys(doc).slice(0, 8).join(', ')})` : Array.isArray(doc) ? ` (an array of ${doc.length} values that are no OpenHands events)` : ''}` };
}

function classifyLine(o: Obj | undefined): { format: TrajectoryFormat; shape: 'events' | 'eval-output' } | undefined {
  if (!o) return undefined;
  if (Array.isArray(o.history) && !o.history.every((m) => isObj(m) && typeof m.role === 'string')) {
    const h = o.history;
    return { format: h.some(isV1Event) ? 'openhands-v1' : 'openhands-v0', shape: 'eval-output' };
  }
  if (isV1Event(o)) return { format: 'openhands-v1', shape: 'events' };
  if (typeof o.v === 'number' && typeof o.at === 'string' && typeof o.type === 'string') return { format: 'expbench-events', shape: 'events' };
  if (isV0Event(o)) return { format: 'openhands-v0', shape: 'events' };
  return undefined;
}

/** The format of a whole JSON document, or undefined. */
export function classifyDoc(doc: unknown): { format: TrajectoryFormat; shape: string } | undefined {
  if (Array.isArray(doc)) {
    if (doc.length === 0) return undefined;
    if (doc.some(isV1Event)) return { format: 'openhands-v1', shape: 'array' };
    if (doc.some(isV0Event) || doc.some((x) => Array.isArray(x) && x.length === 2 && isObj(x[0]) && 'action' in x[0])) return { format: 'openhands-v0', shape: 'array' };
    // mini-swe-agent's first trajectory files: the bare list of chat messages
    if (doc.every((m) => isObj(m) && typeof m.role === 'string' && 'content' in m)) return { format: 'mini-swe-agent', shape: 'messages' };
    return undefined;
  }
  const d = obj(doc);
  if (!d) return undefined;
  if (isObj(d.eval) && ('samples' in d || 'status' in d || 'plan' in d)) return { format: 'inspect-json', shape: 'inspect-log' };
  const steps = arr(d.steps);
  if (steps && (str(d.schema_version)?.startsWith('ATIF') || steps.some((s) => isObj(s) && 'step_id' in s && 'source' in s))) return { format: 'atif', shape: 'atif' };
  // SWE-agent: `trajectory` (with or without `history`), or only a `history` of chat messages
  // (the demonstration/replay form: `{"history": [{role, content, …}]}`), never an OpenHands instance
  if (Array.isArray(d.trajectory) || (Array.isArray(d.history) && ('info' in d || 'environment' in d))) return { format: 'swe-agent', shape: 'traj' };
  if (Array.isArray(d.history) && !('instance_id' in d) && d.history.length > 0 && d.history.every((m) => isObj(m) && typeof m.role === 'string')) return { format: 'swe-agent', shape: 'traj' };
  const msgs = arr(d.messages);
  if (msgs && isObj(d.info) && msgs.every((m) => isObj(m) && typeof m.role === 'string')) return { format: 'mini-swe-agent', shape: 'traj' };
  if (Array.isArray(d.history) && ('instance_id' in d || 'issue' in d)) return { format: d.history.some(isV1Event) ? 'openhands-v1' : 'openhands-v0', shape: 'eval-output-doc' };
  if (('design' in d && 'conclusion' in d) && Object.keys(d).length <= 6) return { format: 'exp-bench-harness', shape: 'gen' };
  if (isHarnessJudge(d)) return { format: 'exp-bench-harness', shape: 'judge' };
  const c: Obj = d;
  if (typeof c.agent_name === 'string' && ('max_duration_per_task_in_hours' in c || 'input_conference_tasks_folder' in c)) {
    return { format: 'exp-bench-harness', shape: 'task_index' in c ? 'config' : 'run-config' };
  }
  return undefined;
}
