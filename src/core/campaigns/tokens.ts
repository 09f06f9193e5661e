import { createHmac, timingSafeEqual } from 'node:crypto';
import { ExpBenchError } from '../errors';

/** The environment variable that holds the campaign's link key (never written to a file). */
export const CAMPAIGN_KEY_ENV = 'EXPBENCH_CAMPAIGN_KEY';
/** Shortest key accepted, characters. */
export const MIN_KEY_CHARS = 32;

/**
 * The organiser's link key from the caller's environment ({@link CAMPAIGN_KEY_ENV}). Links are
 * derived from it, so no token is ever stored: the run set's folder holds only each person's link
 * generation (campaign.jsonl), and `runs links` and the server derive the same tokens from the key.
 * @throws ExpBenchError BAD_INPUT naming the variable when it is unset or shorter than {@link MIN_KEY_CHARS}
 */
export function campaignKey(env: NodeJS.ProcessEnv = process.env): string {
  const k = env[CAMPAIGN_KEY_ENV];
  if (!k || k.length < MIN_KEY_CHARS) {
    throw new ExpBenchError('BAD_INPUT', CAMPAIGN_KEY_ENV, `set it to a secret of at least ${MIN_KEY_CHARS} characters (e.g. \`openssl rand -hex 32\`) in the environment of the organiser's commands: each person's link is derived from it`);
  }
  return k;
}

/**
 * A person's token for one link generation: base64url of HMAC-SHA256(key, "expbench-campaign-link",
 * run set id, person, generation), 43 characters. A new generation (a re-issued link) gives a new
 * token; the old one no longer matches.
 */
export function personToken(key: string, runSet: string, person: string, generation: number): string {
  return createHmac('sha256', key).update(['expbench-campaign-link', runSet, person, String(generation)].join('\0')).digest('base64url');
}

/**
 * The person a presented token belongs to, or undefined: compared in constant time with the token
 * of each person's current generation; a revoked person matches nothing.
 */
export function personOfToken(key: string, runSet: string, links: ReadonlyMap<string, { generation: number; revoked: boolean }>, presented: string): string | undefined {
  if (typeof presented !== 'string' || presented.length !== 43) return undefined;
  const got = Buffer.from(presented);
  let found: string | undefined;
  for (const [person, s] of links) {
    const want = Buffer.from(personToken(key, runSet, person, s.generation));
    if (want.length === got.length && timingSafeEqual(want, got) && !s.revoked) found = person;
  }
  return found;
}
