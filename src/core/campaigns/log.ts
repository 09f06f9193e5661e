import * as path from 'node:path';
import { z } from 'zod';
import { readJsonLines, JsonLinesWriter } from '../util/jsonl';

/** Version of the campaign log's records (docs/campaigns.md "The campaign log"). */
export const CAMPAIGN_LOG_VERSION = 1;

const Iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 timestamp');
const base = { v: z.literal(CAMPAIGN_LOG_VERSION), at: Iso };

/** A record of `campaign.jsonl`: append-only, beside the run set's own `runset.jsonl`. */
export const CampaignRecordSchema = z.discriminatedUnion('type', [
  /** Written once, after the run set's units (the assignment) and before anything is served. */
  z.object({ ...base, type: z.literal('campaign.assigned'), runSet: z.string(), assignments: z.number().int().nonnegative(), people: z.number().int().positive() }),
  /** A person's link of this generation is valid (the token is derived from it: tokens.ts); an earlier generation is not. */
  z.object({ ...base, type: z.literal('link.issued'), person: z.string(), generation: z.number().int().positive() }),
  /** A person's link is refused until a new `link.issued`. */
  z.object({ ...base, type: z.literal('link.revoked'), person: z.string() }),
]);
export type CampaignRecord = z.infer<typeof CampaignRecordSchema>;
export type NewCampaignRecord = CampaignRecord extends infer R ? R extends CampaignRecord ? Omit<R, 'v' | 'at'> : never : never;

/** The campaign log of a run set's folder: `DIR/campaign.jsonl`. */
export class CampaignLog {
  readonly file: string;
  constructor(dir: string, private readonly now: () => number = Date.now) {
    this.file = path.join(path.resolve(dir), 'campaign.jsonl');
  }

  /** Appends one record as a whole line (fsync'd); `v` and `at` stamped here with the host's clock. */
  async append(r: NewCampaignRecord): Promise<CampaignRecord> {
    const rec = CampaignRecordSchema.parse({ v: CAMPAIGN_LOG_VERSION, at: new Date(this.now()).toISOString(), ...r });
    await new JsonLinesWriter(this.file).append([rec]);
    return rec;
  }

  /** Every valid record in order ([] when the file does not exist); lines that fail the schema are counted in `invalid`. */
  async read(): Promise<{ records: CampaignRecord[]; invalid: number }> {
    const records: CampaignRecord[] = [];
    let invalid = 0;
    try {
      for await (const l of readJsonLines(this.file)) {
        if (l.kind !== 'value') { if (l.kind === 'invalid') invalid++; continue; }
        const r = CampaignRecordSchema.safeParse(l.value);
        if (r.success) records.push(r.data); else invalid++;
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { records, invalid };
      throw e;
    }
    return { records, invalid };
  }
}

/** Each person's link state from the log: the current generation, or `revoked`. */
export function linkStates(records: readonly CampaignRecord[]): Map<string, { generation: number; revoked: boolean }> {
  const out = new Map<string, { generation: number; revoked: boolean }>();
  for (const r of records) {
    if (r.type === 'link.issued') out.set(r.person, { generation: r.generation, revoked: false });
    else if (r.type === 'link.revoked') { const s = out.get(r.person); if (s) s.revoked = true; }
  }
  return out;
}
