import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import { ExpBenchError } from '../errors';
import { ownerGone, ownerToken } from '../sandbox/processes';
import { readJsonIfExists } from '../util/fs';

/** What `orchestrator.json` holds: the process that runs the run set now. */
export interface OrchestratorRecord {
  owner: string;
  pid: number;
  host: string;
  command: string;
  since: string;
}

/** The orchestrator of a run set as its folder says, and whether it still runs (undefined: on another host, cannot tell). */
export async function readOrchestrator(file: string): Promise<{ record: OrchestratorRecord; alive: boolean | undefined } | undefined> {
  const record = await readJsonIfExists<OrchestratorRecord>(file).catch(() => undefined);
  if (!record || typeof record.owner !== 'string') return undefined;
  const gone = ownerGone(record.owner);
  return { record, alive: gone === undefined ? undefined : !gone };
}

/**
 * Takes the run set for this process: creates `orchestrator.json` (exclusively) with this
 * process's owner token. A record of a process that is gone (killed) is replaced; one of a
 * process that runs, or that ran on another host (its life cannot be told from here), is not.
 * @returns a release function (removes the file when it is still this process's)
 * @throws ExpBenchError BAD_INPUT naming the run set and the process that holds it
 */
export async function takeRunSet(file: string, command: string): Promise<{ release: () => Promise<void>; previous?: OrchestratorRecord }> {
  const mine: OrchestratorRecord = { owner: ownerToken(), pid: process.pid, host: os.hostname(), command, since: new Date().toISOString() };
  let previous: OrchestratorRecord | undefined;
  for (let i = 0; i < 3; i++) {
    try {
      await fsp.writeFile(file, JSON.stringify(mine) + '\n', { flag: 'wx' });
      return { release: () => release(file, mine.owner), ...(previous ? { previous } : {}) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const held = await readOrchestrator(file);
    if (held && held.alive !== false) {
      const where = held.alive === undefined ? ` on host ${held.record.host} (its life cannot be told from here: remove ${file} once it is gone)` : '';
      throw new ExpBenchError('BAD_INPUT', file.replace(/\/orchestrator\.json$/, ''),
        `the run set is being run by process ${held.record.pid}${where} (\`runs ${held.record.command}\`, since ${held.record.since}): \`runs status\` shows it, \`runs cancel\` stops it`);
    }
    previous = held?.record ?? previous;
    // The holder is gone (or the file is no record): take it over.
    await fsp.rm(file, { force: true });
  }
  throw new ExpBenchError('BAD_INPUT', file, 'could not take the run set: another process keeps taking it');
}

async function release(file: string, owner: string): Promise<void> {
  const held = await readJsonIfExists<OrchestratorRecord>(file).catch(() => undefined);
  if (held?.owner === owner) await fsp.rm(file, { force: true });
}
