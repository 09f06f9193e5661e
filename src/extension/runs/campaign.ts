import * as vscode from 'vscode';
import {
  CAMPAIGN_KEY_ENV, campaignBoard, campaignHours, campaignKey, campaignLinks, CampaignLog, campaignPeople, linkStates, reissueLink, revokeLink,
} from '../../core/campaigns';
import { ExpBenchError } from '../../core/errors';
import type { RunSetView } from '../../core/runs/fold';
import { RunSetLayout } from '../../core/runs/layout';
import type { RunsBoardMessage } from '../../protocol/runs';
import { setting } from '../settings';

/** The SecretStorage key of the organiser's campaign link key (the only place it is kept in VS Code). */
export const CAMPAIGN_KEY_SECRET = 'expbench.campaign.key';

/** Whether a run set is a campaign (its spec has `baseline`, docs/campaigns.md). */
export function isCampaignView(view: RunSetView): boolean {
  const b = (view.spec as { baseline?: unknown }).baseline;
  return typeof b === 'object' && b !== null;
}

/**
 * The organiser's link key: the window's environment ({@link CAMPAIGN_KEY_ENV}) first, else
 * SecretStorage (`Set Campaign Link Key…`). Never a setting or a file.
 * @throws ExpBenchError BAD_INPUT naming the variable when neither holds a key of at least 32 characters
 */
export async function campaignKeyOf(secrets: vscode.SecretStorage): Promise<string> {
  const fromEnv = process.env[CAMPAIGN_KEY_ENV];
  if (fromEnv) return campaignKey(process.env);
  const stored = await secrets.get(CAMPAIGN_KEY_SECRET);
  if (!stored) {
    throw new ExpBenchError('BAD_INPUT', CAMPAIGN_KEY_ENV, `no campaign link key: set ${CAMPAIGN_KEY_ENV} in the environment VS Code runs in, or run "EXP-Bench: Set Campaign Link Key…" (kept in SecretStorage)`);
  }
  return campaignKey({ [CAMPAIGN_KEY_ENV]: stored });
}

/**
 * The campaign part of the board of the run set in `dir`: each person (link generation and state,
 * their working time), one row per assignment as `runs status DIR --json` gives it
 * (src/core/campaigns/views.ts `campaignBoard`), and `perPerson.hours`. Read only; no token.
 */
export async function campaignBoardPart(dir: string, view: RunSetView, now = Date.now()): Promise<NonNullable<RunsBoardMessage['campaign']>> {
  const rows = await campaignBoard(dir, view, now);
  const links = linkStates((await new CampaignLog(new RunSetLayout(dir).root).read()).records);
  const people = campaignPeople(view).map((p) => {
    const l = links.get(p.id);
    return {
      person: p.id, ...(p.name ? { name: p.name } : {}), generation: l?.generation ?? 0, revoked: !l || l.revoked,
      workingMs: rows.filter((r) => r.person === p.id).reduce((a, r) => a + r.workingMs, 0),
    };
  });
  return { people, rows, hours: campaignHours(view) ?? null };
}

/** A person's action on a campaign (the board's buttons, the Run Sets view's menu). */
export type PersonAction = 'copyLink' | 'reissue' | 'revoke';

/**
 * Copies, re-issues or revokes a person's link. Re-issue and revoke ask first (modal) unless
 * `confirmed`; a re-issued link is copied at once. The link goes to the clipboard only: never to
 * a notification, the log or webview state. Returns what was done, in words, or undefined when
 * the organiser said no.
 * @throws ExpBenchError BAD_INPUT for a person who is not a baseliner, a revoked link to copy, or no key (copy)
 */
export async function personAction(secrets: vscode.SecretStorage, dir: string, view: RunSetView, action: PersonAction, person: string, o: { confirmed?: boolean } = {}): Promise<string | undefined> {
  const ask = async (what: string, button: string) => o.confirmed || (await vscode.window.showWarningMessage(what, { modal: true }, button)) === button;
  if (action === 'revoke') {
    if (!(await ask(`Revoke ${person}'s link? Every link of ${person} is refused until it is re-issued.`, 'Revoke Link'))) return undefined;
    await revokeLink(dir, view, person);
    return `${person}'s link is revoked`;
  }
  if (action === 'reissue') {
    if (!(await ask(`Re-issue ${person}'s link? The link ${person} has now stops working.`, 'Re-issue Link'))) return undefined;
    const g = await reissueLink(dir, view, person);
    const copied = await copyLink(secrets, dir, view, person).then(() => true, () => false);
    return `${person}'s link re-issued (generation ${g})${copied ? '; the new link is copied' : ''}`;
  }
  await copyLink(secrets, dir, view, person);
  return `${person}'s link is copied`;
}

async function copyLink(secrets: vscode.SecretStorage, dir: string, view: RunSetView, person: string): Promise<void> {
  const key = await campaignKeyOf(secrets);
  const link = (await campaignLinks(dir, view, key, setting('runs.campaignLinkBase') || undefined)).find((l) => l.person === person);
  if (!link) throw new ExpBenchError('BAD_INPUT', person, `not a baseliner of the campaign in ${dir}`);
  if (!link.url) throw new ExpBenchError('BAD_INPUT', person, `${person}'s link is revoked: re-issue it first`);
  await vscode.env.clipboard.writeText(link.url);
}
