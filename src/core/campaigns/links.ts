import { ExpBenchError } from '../errors';
import type { RunSetView } from '../runs/fold';
import { CampaignLog, linkStates } from './log';
import { personToken } from './tokens';
import { campaignPeople } from './views';

/** One person's link (`runs links DIR --json`): `url` is undefined while the link is revoked. */
export interface PersonLink { person: string; url?: string; generation: number; revoked: boolean }

/** Default port of a campaign's forwarder (loopback). */
export const DEFAULT_CAMPAIGN_PORT = 8470;

/**
 * Each person's link, `<base>/?tkn=<token>` (base default `http://127.0.0.1:8470`), from the
 * key and each person's current link generation in `campaign.jsonl`. Derived, never stored.
 * @throws ExpBenchError BAD_INPUT naming `dir` when it holds no campaign log (not a campaign)
 */
export async function campaignLinks(dir: string, view: RunSetView, key: string, base = `http://127.0.0.1:${DEFAULT_CAMPAIGN_PORT}`): Promise<PersonLink[]> {
  const { records } = await new CampaignLog(dir).read();
  if (!records.some((r) => r.type === 'campaign.assigned')) throw new ExpBenchError('BAD_INPUT', dir, 'not a campaign (no campaign.jsonl with its assignment): create it with `expbench campaign create SPEC --out DIR`');
  const states = linkStates(records);
  let root = base;
  while (root.endsWith('/')) root = root.slice(0, -1);
  return campaignPeople(view).map((p) => {
    const s = states.get(p.id) ?? { generation: 0, revoked: true };
    const live = s.generation > 0 && !s.revoked;
    return { person: p.id, ...(live ? { url: `${root}/?tkn=${personToken(key, view.id, p.id, s.generation)}` } : {}), generation: s.generation, revoked: !live };
  });
}

function known(view: RunSetView, person: string, dir: string): void {
  if (!campaignPeople(view).some((p) => p.id === person)) throw new ExpBenchError('BAD_INPUT', person, `not a baseliner of the campaign in ${dir}`);
}

/** Re-issues a person's link: a new generation; the old token is refused from now on. @throws ExpBenchError BAD_INPUT naming a person who is not a baseliner */
export async function reissueLink(dir: string, view: RunSetView, person: string): Promise<number> {
  known(view, person, dir);
  const log = new CampaignLog(dir);
  const g = (linkStates((await log.read()).records).get(person)?.generation ?? 0) + 1;
  await log.append({ type: 'link.issued', person, generation: g });
  return g;
}

/** Revokes a person's link until it is re-issued. @throws ExpBenchError BAD_INPUT naming a person who is not a baseliner */
export async function revokeLink(dir: string, view: RunSetView, person: string): Promise<void> {
  known(view, person, dir);
  await new CampaignLog(dir).append({ type: 'link.revoked', person });
}
