import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { checkClaims, OutputSource } from './claims';
import type { ClaimsResult } from './record';
import type { SessionLayout } from '../layout';

/** Claims of a conclusion checked against the session's work-container run logs. */
export interface SessionClaimsStatus extends ClaimsResult {
  /** The logs searched, relative to the session root (`private/runs/<id>.log`), oldest first. */
  logs: string[];
}

/**
 * Lists the numbers `conclusion` claims and, for each, whether it appears in the logs of the
 * script runs so far (`private/runs/*.log`). The claim rules and the matching tolerance are the
 * verifier's (src/core/verify/claims.ts); `where[].source` is the log's path relative to the session.
 * No runs → every claim is reported not found.
 */
export async function claimsStatus(layout: SessionLayout, conclusion: string): Promise<SessionClaimsStatus> {
  let names: string[] = [];
  try {
    names = (await fsp.readdir(layout.runs)).filter((n) => n.endsWith('.log')).sort();
  } catch (e: any) {
    if (e?.code !== 'ENOENT') throw e;
  }
  const outputs: OutputSource[] = [];
  for (const n of names) {
    const file = path.join(layout.runs, n);
    outputs.push({ source: path.relative(layout.root, file).split(path.sep).join('/'), text: await fsp.readFile(file, 'utf8') });
  }
  return { ...checkClaims(conclusion, outputs), logs: outputs.map((o) => o.source) };
}
